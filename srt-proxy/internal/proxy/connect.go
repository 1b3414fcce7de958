package proxy

import (
	"bufio"
	"net"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// connectEstablished is the answer to an allowed CONNECT.
const connectEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n"

// serveConnect serves a CONNECT: authenticate, parse the target, ask, dial,
// answer 200 and tunnel. Every refusal closes the connection.
func (h *httpConn) serveConnect(head *http1.RequestHead, rec *record) {
	user, _, ok := h.s.authenticate(head)
	if !ok {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseAuth, Kind: ask.KindConnect}, true)
		return
	}
	rec.user = user
	host, port, err := http1.ParseConnectTarget(head.Target)
	if err != nil {
		h.refuse(rec, refusal.Refusal{Cause: refusal.CauseMalformed, Kind: ask.KindConnect, Reason: err.Error()}, true)
		return
	}
	req := &ask.Request{Kind: ask.KindConnect, User: user, Method: "CONNECT", Host: host, Port: port, Path: "*"}
	rec.about(req)
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
	rec.addr = dialed.Addr
	if err != nil {
		h.upstreamFailed(rec, req, err, true)
		return
	}
	h.bw.WriteString(connectEstablished)
	if err := h.bw.Flush(); err != nil {
		up.Close()
		rec.set(decisionFail, "writing the CONNECT answer: "+err.Error())
		h.s.log(rec)
		return
	}
	rec.set(decisionAllow, v.Reason)
	early := takeBuffered(h.br)
	h.br, h.bw = nil, nil // an idle tunnel holds no buffers
	h.s.runTunnel(h.c, early, up, rec)
	h.s.log(rec)
}

// takeBuffered returns a copy of the bytes br holds that the client sent
// after its request (the start of the tunnel's stream); nil for a nil br.
func takeBuffered(br *bufio.Reader) []byte {
	if br == nil {
		return nil
	}
	n := br.Buffered()
	if n == 0 {
		return nil
	}
	b, _ := br.Peek(n)
	return append([]byte(nil), b...)
}

// runTunnel relays between the client and up until both are done, first
// sending up what the client sent early. The bytes are counted into rec.
func (s *Server) runTunnel(c *conn, early []byte, up net.Conn, rec *record) {
	if !c.setUpstream(up) {
		up.Close()
		rec.set(decisionFail, "server closing")
		return
	}
	defer s.tunnelOpened(rec.kind)()
	if len(early) > 0 {
		n, err := up.Write(early)
		rec.up += int64(n)
		if err != nil {
			rec.set(decisionFail, "writing to the upstream: "+err.Error())
			return
		}
	}
	n, m := tunnel(c.raw, up)
	rec.up += n
	rec.down += m
}
