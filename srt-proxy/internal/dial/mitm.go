package dial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
)

// MITMProxy is the user's MITM proxy (network.mitmProxy): an HTTP proxy
// listening on a Unix socket. A destination whose host it takes is
// reached through it and nothing else: a tunnel (HTTP CONNECT, SOCKS5,
// a captured connection) by its CONNECT, a plain-HTTP request by sending
// it there in absolute form. It comes before the parent proxy, and the
// resolved-address check does not apply (the MITM proxy resolves the
// name), as in the reference.
type MITMProxy struct {
	// Socket is the path of its Unix socket.
	Socket string
	// Takes says whether a canonical host goes through it (the settings'
	// domains, matched without the port).
	Takes func(host string) bool
}

// takes reports whether host goes through the MITM proxy m.
func (m *MITMProxy) takes(host string) bool {
	return m != nil && m.Takes != nil && m.Takes(host)
}

// url is how a connection to the MITM proxy is described in Dialed.Parent:
// a plain-HTTP request goes to it in absolute form, without credentials.
func (m *MITMProxy) url() *url.URL {
	return &url.URL{Scheme: "unix", Path: m.Socket}
}

// CheckSocket checks the MITM proxy's socket when srt-proxy starts: a path
// that is there must be a Unix socket. A missing one is accepted (the
// MITM proxy may start later): each connection through it then fails
// (502) with a reason that names the socket.
func CheckSocket(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil && os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case fi.Mode().Type() != os.ModeSocket:
		return fmt.Errorf("%s is not a Unix socket (it is a %s); give the socket the MITM proxy listens on", path, kindOf(fi.Mode()))
	}
	return nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m.IsRegular():
		return "regular file"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "file of another kind"
}

// mitmTunnel opens a tunnel to host:port through the MITM proxy: its
// socket, "CONNECT host:port", a 2xx answer, bounded as a parent's
// handshake is. Every failure is an *UnreachableError whose MITM names the
// socket.
func (d *Dialer) mitmTunnel(ctx context.Context, host string, port int) (net.Conn, Dialed, error) {
	ctx, cancel := context.WithTimeout(ctx, defaultHandshakeTimeout)
	defer cancel()
	raw, err := d.dialMITM(ctx, host, port)
	if err != nil {
		return nil, Dialed{}, err
	}
	dialed := Dialed{Addr: d.MITM.Socket, Parent: d.MITM.url()}
	conn, err := handshake(ctx, raw, dialed.Parent, nil, host, port)
	if err != nil {
		raw.Close()
		return nil, Dialed{}, d.mitmFailed(host, port, err)
	}
	return conn, dialed, nil
}

// dialMITM connects to the MITM proxy's socket.
func (d *Dialer) dialMITM(ctx context.Context, host string, port int) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "unix", d.MITM.Socket)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err // "connect: no such file or directory": the socket is named once, by mitmFailed
		}
		return nil, d.mitmFailed(host, port, err)
	}
	return c, nil
}

func (d *Dialer) mitmFailed(host string, port int, err error) error {
	return &UnreachableError{Host: host, Port: port, MITM: d.MITM.Socket, Err: fmt.Errorf("MITM proxy %s: %w", d.MITM.Socket, err)}
}
