package dial

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/srt-sandbox/decider/policy"
)

// HTTPTransport sends the plain-HTTP requests the proxy forwards, keeping
// upstream connections alive between requests. A request's URL must be
// absolute ("http://host:port/…" or "https://…") with a canonical host. It
// goes through the parent proxy's http URL (its https URL for an https://
// URL) unless NO_PROXY exempts the host; otherwise it is dialled with
// Direct, so the resolved-address check applies to every new upstream
// connection. Errors from the dial are the Dialer's typed errors.
type HTTPTransport struct {
	d          *Dialer
	direct     *http.Transport
	viaParent  *http.Transport
	lastPolicy atomic.Pointer[policy.AddressPolicy]
}

// NewHTTPTransport returns the transport for plain-HTTP requests dialled
// by d.
func (d *Dialer) NewHTTPTransport() *HTTPTransport {
	t := &HTTPTransport{d: d}
	t.direct = newTransport()
	t.direct.DialContext = func(ctx context.Context, _, addr string) (net.Conn, error) {
		host, port, err := splitAddr(addr)
		if err != nil {
			return nil, err
		}
		c, _, err := d.Direct(ctx, host, port)
		return c, err
	}
	if d.Parent != nil {
		t.viaParent = newTransport()
		t.viaParent.Proxy = func(r *http.Request) (*url.URL, error) {
			if u := d.Parent.For(r.URL.Hostname(), r.URL.Scheme == "https"); u != nil {
				return u, nil
			}
			return nil, errors.New("no parent proxy for this request")
		}
		// The dials below reach the parent proxy, never a destination.
		t.viaParent.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.dial(ctx, network, addr)
		}
		t.viaParent.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.dialParentTLS(ctx, network, addr)
		}
	}
	return t
}

func newTransport() *http.Transport {
	return &http.Transport{
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		DisableCompression:     true, // relay bodies as the upstream encoded them
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// RoundTrip sends req upstream.
func (t *HTTPTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.d.Policy != nil {
		// Lists changed: connections checked under the old ones are not reused.
		if cur := t.d.Policy(); t.lastPolicy.Swap(cur) != cur {
			t.direct.CloseIdleConnections()
		}
	}
	if t.viaParent != nil && t.d.Parent.For(req.URL.Hostname(), req.URL.Scheme == "https") != nil {
		return t.viaParent.RoundTrip(req)
	}
	return t.direct.RoundTrip(req)
}

// CloseIdleConnections closes the idle upstream connections.
func (t *HTTPTransport) CloseIdleConnections() {
	t.direct.CloseIdleConnections()
	if t.viaParent != nil {
		t.viaParent.CloseIdleConnections()
	}
}

// dialParentTLS reaches an https:// parent proxy at addr over TLS.
func (d *Dialer) dialParentTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	var u *url.URL
	for _, cand := range []*url.URL{d.Parent.HTTP, d.Parent.HTTPS} {
		if cand != nil && cand.Scheme == "https" && parentAddr(cand) == addr {
			u = cand
		}
	}
	if u == nil {
		return nil, errors.New("no https parent proxy at " + addr)
	}
	raw, err := d.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(raw, d.Parent.tlsConfigFor(u))
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// splitAddr splits the "host:port" an http.Transport dials.
func splitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, err
	}
	return host, port, nil
}
