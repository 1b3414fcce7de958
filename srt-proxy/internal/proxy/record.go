package proxy

import (
	"time"

	"github.com/srt-sandbox/decider/sanitize"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// log writes the record, once: a refusal written on the way (an upstream
// that failed under forward) is not written again by the caller.
func (s *Server) log(r *serve.Record) {
	if !r.End() {
		return
	}
	s.observe(r)
	e := s.Logger.Info()
	if !e.Enabled() {
		return // a logger that discards (no --debug): nothing to format
	}
	e.Str("decision", r.Decision).
		Str("reason", sanitize.Line(r.Reason)).
		Str("kind", r.Kind).
		Str("host", r.Host).
		Int("port", r.Port).
		Str("user", r.User).
		Str("addr", r.Addr).
		Int64("bytes_up", r.Up).
		Int64("bytes_down", r.Down).
		Int64("duration_ms", time.Since(r.Start).Milliseconds())
	if r.Inject != "" {
		e.Str("inject", r.Inject) // an allow that named masked secrets: what became of them
	}
	e.Send()
}
