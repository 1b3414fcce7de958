package captured

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/srt-sandbox/decider/hostname"

	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/terminate"
)

// helloServerName peeks at the TLS ClientHello a client starts with and
// returns the server name it asks for, canonical; "" when it sends no TLS
// before br's read deadline, asks for no name, or for one that is no host
// name. br keeps every byte: nothing is consumed. The ClientHello is
// parsed by crypto/tls itself, which is handed a copy of the first record
// and stopped once it has read the hello (a hello spread over several
// records yields no name).
func helloServerName(br *bufio.Reader) string {
	if terminate.Sniff(br) != mitm.ClientHello {
		return ""
	}
	hdr, err := br.Peek(5)
	if err != nil {
		return ""
	}
	record, err := br.Peek(5 + int(hdr[3])<<8 | int(hdr[4]))
	if err != nil {
		return ""
	}
	var name string
	errStop := errors.New("stop")
	cfg := &tls.Config{GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		name = hi.ServerName
		return nil, errStop
	}}
	tls.Server(&helloConn{r: bytes.NewReader(record)}, cfg).Handshake()
	canon, err := hostname.Canonical(name)
	if err != nil {
		return ""
	}
	if _, err := netip.ParseAddr(canon); err == nil {
		return "" // a server name is never an address (RFC 6066 §3)
	}
	return canon
}

// helloConn is what crypto/tls reads a ClientHello from: a copy of the
// bytes, and a sink for what it would answer.
type helloConn struct{ r *bytes.Reader }

func (c *helloConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *helloConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }
