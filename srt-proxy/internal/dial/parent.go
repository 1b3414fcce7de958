package dial

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"time"
)

// ParentProxy is the upstream HTTP proxy srt-proxy chains through (§4.10).
type ParentProxy struct {
	HTTP    *url.URL // plain-HTTP requests; nil: they go direct
	HTTPS   *url.URL // CONNECT and SOCKS5 tunnels; nil: HTTP is used
	NoProxy *NoProxy // destinations that go direct; nil: only loopback
	// All: every destination goes through the parent, loopback and
	// NoProxy's included (--parent-all).
	All bool
	// TLSConfig is used to reach an https:// parent; nil: the system roots,
	// with the parent's host name as the server name.
	TLSConfig *tls.Config
	// HandshakeTimeout bounds reaching the parent and its answer to a
	// CONNECT; 0 means 30 s.
	HandshakeTimeout time.Duration
}

const defaultHandshakeTimeout = 30 * time.Second

// hasScheme matches a URL that names its scheme.
var hasScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// ParseParentURL parses a parent proxy URL as the reference does: a URL
// without a scheme gets "http://"; only http and https URLs with a host are
// accepted.
func ParseParentURL(raw string) (*url.URL, error) {
	s := raw
	if !hasScheme.MatchString(s) {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parent proxy URL: %w", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("parent proxy URL: scheme %q is not http or https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("parent proxy URL: no host")
	}
	return u, nil
}

// For returns the parent proxy URL a connection to host goes through, or
// nil when it goes direct. tunnel selects the https URL (falling back to the
// http one); a plain-HTTP request uses only the http URL.
func (p *ParentProxy) For(host string, tunnel bool) *url.URL {
	if p == nil || !p.All && p.NoProxy.Bypass(host) {
		return nil
	}
	if tunnel && p.HTTPS != nil {
		return p.HTTPS
	}
	return p.HTTP
}

func (p *ParentProxy) handshakeTimeout() time.Duration {
	if p.HandshakeTimeout > 0 {
		return p.HandshakeTimeout
	}
	return defaultHandshakeTimeout
}

// tlsConfigFor returns the TLS configuration for reaching the parent u.
func (p *ParentProxy) tlsConfigFor(u *url.URL) *tls.Config {
	var c *tls.Config
	if p.TLSConfig != nil {
		c = p.TLSConfig.Clone()
	} else {
		c = &tls.Config{}
	}
	if c.ServerName == "" {
		// For an IP literal Go sends no SNI and verifies the IP SANs.
		c.ServerName = u.Hostname()
	}
	return c
}

// parentAddr is the host:port of parent u, with the scheme's default port.
func parentAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// ProxyAuthorization is the Proxy-Authorization value for u's userinfo
// (Basic, with the percent-decoded user and password), or "" when u has
// none.
func ProxyAuthorization(u *url.URL) string {
	if u == nil || u.User == nil {
		return ""
	}
	pass, _ := u.User.Password()
	if u.User.Username() == "" && pass == "" {
		return ""
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
}
