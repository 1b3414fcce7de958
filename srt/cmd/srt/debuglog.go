//go:build linux

package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// debugHandler is the slog handler of srt's debug lines (-d, SRT_DEBUG):
// "srt: debug: " and the message, then each attribute as key=value, in
// the order given; a string value holding a space, a quote, a backslash
// or a byte outside printable ASCII is quoted as a Go string.
type debugHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	attrs []slog.Attr // from WithAttrs, keys already prefixed
	group string      // from WithGroup: "g." prefixes the record's keys
}

func newDebugLogger(w io.Writer) *slog.Logger {
	return slog.New(&debugHandler{mu: new(sync.Mutex), w: w})
}

func (h *debugHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelDebug }

func (h *debugHandler) Handle(_ context.Context, r slog.Record) error {
	b := []byte("srt: debug: " + r.Message)
	for _, a := range h.attrs {
		b = appendAttr(b, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, h.group, a)
		return true
	})
	b = append(b, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

func (h *debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range attrs {
		a.Key = h.group + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *debugHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// appendAttr appends " key=value" (a group's attributes each so, their
// keys prefixed with the group's name); an empty attribute adds nothing.
func appendAttr(b []byte, prefix string, a slog.Attr) []byte {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			b = appendAttr(b, prefix, g)
		}
		return b
	}
	if a.Equal(slog.Attr{}) {
		return b
	}
	s := v.String()
	if needsQuote(s) {
		s = strconv.Quote(s)
	}
	return append(b, " "+prefix+a.Key+"="+s...)
}

// needsQuote says whether a value is quoted.
func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == ' ' || c == '\\' || c == '"' {
			return true
		}
	}
	return false
}
