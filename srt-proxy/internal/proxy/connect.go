package proxy

import (
	"net"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// connectEstablished is the answer to an allowed CONNECT.
const connectEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n"

// serveConnect serves a CONNECT: authenticate, parse the target, ask, dial,
// answer 200 and tunnel. Every refusal closes the connection.
func (h *httpConn) serveConnect(head *http1.RequestHead, rec *serve.Record) {
	user, _, ok := h.s.authenticate(head)
	if !ok {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindConnect}, true)
		return
	}
	rec.User = user
	host, port, err := http1.ParseConnectTarget(head.Target)
	if err != nil {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindConnect, Reason: err.Error()}, true)
		return
	}
	req := &ask.Request{Kind: ask.KindConnect, User: user, Method: "CONNECT", Host: host, Port: port, Path: "*"}
	rec.About(req)
	ctx, cancel := h.requestContext()
	defer cancel()
	v, err := h.s.Asker.Ask(ctx, req)
	if err != nil {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseUnavailable, Kind: ask.KindConnect, Reason: refusal.DeciderReason(err.Error())}, true)
		return
	}
	if !v.Allow {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseDenied, Kind: ask.KindConnect, Status: v.Status, Reason: v.Reason, Host: host}, true)
		return
	}
	if h.serveTerminated(req, v, rec) { // TLS termination (terminate_connect.go)
		return
	}
	up, dialed, err := h.s.Dialer.Tunnel(ctx, host, port)
	rec.Addr = dialed.Addr
	if err != nil {
		h.upstreamFailed(rec, req, err, true)
		return
	}
	h.bw.WriteString(connectEstablished)
	if err := h.bw.Flush(); err != nil {
		up.Close()
		rec.Set(serve.Fail, "writing the CONNECT answer: "+err.Error())
		h.s.log(rec)
		return
	}
	rec.Set(serve.Allow, v.Reason)
	early := serve.TakeBuffered(h.br)
	h.br, h.bw = nil, nil // an idle tunnel holds no buffers
	h.s.runTunnel(h.c, early, up, rec)
	h.s.log(rec)
}

// runTunnel relays between the client and up until both are done, first
// sending up what the client sent early. The bytes are counted into rec.
func (s *Server) runTunnel(c *serve.Conn, early []byte, up net.Conn, rec *serve.Record) {
	if !c.SetUpstream(up) {
		up.Close()
		rec.Set(serve.Fail, "server closing")
		return
	}
	defer s.tunnelOpened(rec.Kind)()
	if len(early) > 0 {
		n, err := up.Write(early)
		rec.Up += int64(n)
		if err != nil {
			rec.Set(serve.Fail, "writing to the upstream: "+err.Error())
			return
		}
	}
	n, m := serve.Tunnel(c.Raw, up)
	rec.Up += n
	rec.Down += m
}
