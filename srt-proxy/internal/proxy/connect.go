package proxy

import (
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// serveConnect serves a CONNECT: authenticate, parse the target, ask, dial,
// answer 200 and tunnel. Every refusal closes the connection.
func (s *Server) serveConnect(h *forward.Conn, head *http1.RequestHead, rec *serve.Record) {
	user, _, ok := s.authenticate(head)
	if !ok {
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindConnect}, true)
		return
	}
	rec.User = user
	host, port, err := http1.ParseConnectTarget(head.Target)
	if err != nil {
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindConnect, Reason: err.Error()}, true)
		return
	}
	req := &ask.Request{Kind: ask.KindConnect, User: user, Method: "CONNECT", Host: host, Port: port, Path: "*"}
	rec.About(req)
	ctx, cancel := h.RequestContext()
	defer cancel()
	v, err := s.Asker.Ask(ctx, req)
	if err != nil {
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseUnavailable, Kind: ask.KindConnect, Reason: refusal.DeciderReason(err.Error())}, true)
		return
	}
	if !v.Allow {
		h.Refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindConnect, Status: v.Status, Reason: v.Reason, Host: host}, true)
		return
	}
	if terminate.ServeConnect(s.TLS, h, req, v, rec) { // TLS termination
		return
	}
	up, dialed, err := s.Dialer.Tunnel(ctx, host, port)
	rec.Addr = dialed.Addr
	if err != nil {
		h.UpstreamFailed(rec, req, err, true)
		return
	}
	h.BW.WriteString(http1.ConnectEstablished)
	if err := h.BW.Flush(); err != nil {
		up.Close()
		rec.Set(serve.Fail, "writing the CONNECT answer: "+err.Error())
		s.log(rec)
		return
	}
	rec.Set(serve.Allow, v.Reason)
	early := serve.TakeBuffered(h.BR)
	h.BR, h.BW = nil, nil // an idle tunnel holds no buffers
	s.env.RunTunnel(h.Client, early, up, rec)
	s.log(rec)
}
