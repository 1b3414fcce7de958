package dial

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"
)

// maxParentResponseHead bounds the parent's answer to a CONNECT.
const maxParentResponseHead = 16 << 10

// connectVia opens a tunnel to host:port through parent u: TCP (and TLS for
// an https:// parent) to the parent, "CONNECT host:port", a 2xx answer. The
// whole handshake is bounded by the parent's handshake timeout. Every
// failure, including a refusal by the parent, is an *UnreachableError.
func (d *Dialer) connectVia(ctx context.Context, u *url.URL, host string, port int) (net.Conn, Dialed, error) {
	ctx, cancel := context.WithTimeout(ctx, d.Parent.handshakeTimeout())
	defer cancel()
	fail := func(err error) (net.Conn, Dialed, error) {
		return nil, Dialed{}, &UnreachableError{Host: host, Port: port, Parent: u.Host, Err: fmt.Errorf("parent proxy %s: %w", u.Host, err)}
	}
	raw, err := d.dial(ctx, "tcp", parentAddr(u))
	if err != nil {
		return fail(err)
	}
	dialed := Dialed{Addr: raw.RemoteAddr().String(), Parent: u}
	conn, err := handshake(ctx, raw, u, d.Parent, host, port)
	if err != nil {
		raw.Close()
		return fail(err)
	}
	return conn, dialed, nil
}

// handshake runs the CONNECT exchange on raw and returns the tunnel.
func handshake(ctx context.Context, raw net.Conn, u *url.URL, p *ParentProxy, host string, port int) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn := raw
	if u.Scheme == "https" {
		tc := tls.Client(raw, p.tlsConfigFor(u))
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		conn = tc
	}
	target := authority(host, port)
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if auth := ProxyAuthorization(u); auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(&io.LimitedReader{R: conn, N: maxParentResponseHead}, 4096)
	if err := readConnectResponse(br); err != nil {
		return nil, err
	}
	if !stop() || ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	raw.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		return &prefixConn{Conn: conn, prefix: bytes.Clone(early)}, nil
	}
	return conn, nil
}

// readConnectResponse reads a CONNECT response head and accepts a 2xx.
func readConnectResponse(br *bufio.Reader) error {
	status, err := readLine(br)
	if err != nil {
		return err
	}
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			break
		}
	}
	if len(status) < 12 || !bytes.HasPrefix(status, []byte("HTTP/1.")) || status[8] != ' ' ||
		status[9] != '2' || status[10] < '0' || status[10] > '9' || status[11] < '0' || status[11] > '9' ||
		(len(status) > 12 && status[12] != ' ') {
		return fmt.Errorf("refused CONNECT: %q", printable(status))
	}
	return nil
}

var errParentHeadTooLarge = errors.New("CONNECT response head too large")

// readLine returns one line without its CRLF (or LF).
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errParentHeadTooLarge
	}
	if err == io.EOF {
		return nil, errors.New("connection closed during CONNECT handshake")
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}

// printable keeps at most 80 bytes of an answer, with control bytes as '?'.
func printable(b []byte) string {
	if len(b) > 80 {
		b = b[:80]
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}

// prefixConn is a net.Conn whose first reads return bytes already read
// from it.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
