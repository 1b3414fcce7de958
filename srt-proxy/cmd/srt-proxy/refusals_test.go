//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// Every X-Deny-Reason code of proxy-only mode, byte for byte, in both
// framings.
func TestRefusals(t *testing.T) {
	const (
		allowlist   = "Connection blocked by network allowlist"
		plaintext   = "the allow decision sets headers, and headers are not set on plain-HTTP requests unless plaintext header sets are enabled; nothing was forwarded"
		bodylessWhy = "the decider asked to see the body of a request whose method normally has none, and it has one"
	)
	upstream := closedAddr(t)
	tests := []struct {
		name    string
		request string
		verdict []string // the decider's answers to the request's req, in order; none: not asked
		want    string
	}{
		{name: "host not on the allow list", request: "GET http://notallowed.test/x HTTP/1.1\r\nHost: notallowed.test\r\n\r\n",
			want: refusal(403, "Forbidden", "host_not_allowed", allowlist, false)},
		{name: "host on the deny list", request: "GET http://bad.wild.test/x HTTP/1.1\r\nHost: bad.wild.test\r\n\r\n",
			want: refusal(403, "Forbidden", "host_not_allowed", allowlist, false)},
		{name: "port not allowed", request: "GET http://portonly.test:8080/ HTTP/1.1\r\nHost: portonly.test:8080\r\n\r\n",
			want: refusal(403, "Forbidden", "host_not_allowed", allowlist, false)},
		{name: "Host header names another host", request: "GET http://allowed.test/x HTTP/1.1\r\nHost: other.test\r\n\r\n",
			want: refusal(421, "Misdirected Request", "misdirected", "Host header does not match the request target", false)},
		{name: "Host header names another port", request: "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test:81\r\n\r\n",
			want: refusal(421, "Misdirected Request", "misdirected", "Host header does not match the request target", false)},
		{name: "two Host headers", request: "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\nHost: allowed.test\r\n\r\n",
			want: refusal(421, "Misdirected Request", "misdirected", "more than one Host header", false)},
		{name: "no Host header in HTTP/1.1", request: "GET http://allowed.test/x HTTP/1.1\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "HTTP/1.1 request without a Host header", false)},
		// Targets that name no destination say so (the reference: "destination
		// host is not plain ASCII" of them all).
		{name: "origin-form target", request: "GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request-target is in origin form (/path): a proxy needs the absolute form, http://host/path", false)},
		{name: "asterisk-form target", request: "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request-target * names no destination: a proxy needs the absolute form, http://host/path", false)},
		{name: "another scheme", request: "GET ftp://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request-target is not an http:// or https:// URL", false)},
		{name: "userinfo", request: "GET http://u@allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request-target names a user (user@host), which is not forwarded", false)},
		{name: "not plain ASCII", request: "GET http://b\xc3\xa4d.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request: request-target", true)},
		{name: "host with an underscore", request: "GET http://a_b.test/x HTTP/1.1\r\nHost: a_b.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "destination host is not plain ASCII", false)},
		// Heads the reference's parser refuses (issue 14: they were forwarded).
		{name: "bare LF line endings", request: "GET http://allowed.test/ HTTP/1.1\nHost: allowed.test\n\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request: line ending is a bare LF, not CRLF", true)},
		{name: "one bare LF", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\nX: y\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request: line ending is a bare LF, not CRLF", true)},
		{name: "two identical Content-Length", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request: more than one Content-Length", true)},
		{name: "fragment", request: "GET http://allowed.test/x#f HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request-target", false)},
		{name: "double slash", request: "GET http://allowed.test//x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request-target", false)},
		{name: "unparsable head", request: "GARBAGE\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "malformed request: request line", true)},
		{name: "head over 2 MiB", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request head too large", true)},
		{name: "too many header values for the decider", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n" + strings.Repeat("X-A: 1\r\n", 191) + "\r\n",
			want: refusal(400, "Bad Request", "bad_request", "request headers too large", true)},
		{name: "TRACE", request: "TRACE http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(405, "Method Not Allowed", "method_refused", "the TRACE method is not forwarded", true)},
		{name: "track", request: "track http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: refusal(405, "Method Not Allowed", "method_refused", "the track method is not forwarded", true)},
		{name: "decider denies with its status", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			verdict: []string{`"action":"deny","status":418,"reason":"no tea"`},
			want:    refusal(418, "I'm a Teapot", "decider", "no tea", true)},
		{name: "decider denies without a reason", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			verdict: []string{`"action":"deny","status":599`},
			want:    refusal(599, "unknown", "decider", "denied by sandbox policy", true)},
		{name: "allow that sets a header", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			verdict: []string{`"action":"allow","setHeaders":{"x-a":["1"]}}`[:len(`"action":"allow","setHeaders":{"x-a":["1"]}`)]},
			want:    refusal(403, "Forbidden", "plaintext_header_set", plaintext, true)},
		{name: "allow with a credential", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			verdict: []string{`"action":"allow","cred":"github","credential":"tok"`},
			want:    refusal(403, "Forbidden", "plaintext_header_set", plaintext, true)},
		{name: "body of a GET asked for", request: "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n\r\nhello",
			verdict: []string{`"action":"need_body","max":10`},
			want:    refusal(403, "Forbidden", "bodyless_method_body", bodylessWhy, true)},
		// The reference: a bare "Bad Gateway".
		{name: "upstream unreachable", request: "GET http://" + upstream + "/ HTTP/1.1\r\nHost: " + upstream + "\r\n\r\n",
			verdict: []string{`"action":"allow"`},
			want:    refusal(502, "Bad Gateway", "upstream_connection_refused", "upstream "+upstream+": connection refused", false)},
		{name: "CONNECT not on the allow list", request: "CONNECT notallowed.test:443 HTTP/1.1\r\nHost: notallowed.test:443\r\n\r\n",
			want: connectRefusal(403, "Forbidden", "host_not_allowed", allowlist)},
		{name: "CONNECT without a CA", request: "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
			want: connectRefusal(403, "Forbidden", "opaque_tunnel", "this proxy does not tunnel CONNECTs it cannot inspect")},
		{name: "CONNECT without a port", request: "CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "CONNECT target has no port: it must be host:port")},
		{name: "CONNECT to an IPv6 literal without a port", request: "CONNECT [::1] HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "CONNECT target has no port: it must be host:port")},
		{name: "CONNECT naming a user", request: "CONNECT u@allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "CONNECT target names a user (user@host): it must be host:port")},
		{name: "CONNECT to a path", request: "CONNECT /x HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "CONNECT target is not host:port")},
		{name: "CONNECT to a host not in plain ASCII", request: "CONNECT a_b.test:443 HTTP/1.1\r\nHost: a_b.test:443\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "destination host is not plain ASCII")},
		{name: "CONNECT to port 0", request: "CONNECT allowed.test:0 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
			want: connectRefusal(400, "Bad Request", "bad_request", "malformed request-target")},
	}
	hello := `{"t":"hello","proto":1,"allowedDomains":["allowed.test","127.0.0.1","*.wild.test","portonly.test:80"],"deniedDomains":["bad.wild.test"]}`
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			p := start(t, startOpts{framing: f, hello: hello})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					got := async(func() string { return p.roundTrip(tt.request) })
					for _, v := range tt.verdict {
						id, _ := p.dec.nextReq()
						p.dec.send(verdict(id, v))
					}
					if ans := await(t, got); ans != tt.want {
						t.Errorf("got  %q\nwant %q", ans, tt.want)
					}
				})
			}
		})
	}
}

// closedAddr is 127.0.0.1:<a port nothing listens on>.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A refusal before the decider's turn keeps the connection; the next
// request on it is served.
func TestRefusalKeepsConnection(t *testing.T) {
	p := start(t, startOpts{})
	c := p.dial()
	br := bufio.NewReader(c)
	io.WriteString(c, "GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\nGET http://allowed.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n")
	if got := readAnswer(t, c, br); got != refusal(403, "Forbidden", "host_not_allowed", "Connection blocked by network allowlist", false) {
		t.Fatalf("first %q", got)
	}
	if got := readAnswer(t, c, br); got != refusal(421, "Misdirected Request", "misdirected", "Host header does not match the request target", false) {
		t.Fatalf("second %q", got)
	}
}

func TestSOCKS5Refused(t *testing.T) {
	p := start(t, startOpts{})
	c := p.dial()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte{5, 1, 0})
	var method [2]byte
	io.ReadFull(c, method[:])
	c.Write([]byte{5, 1, 0, 3, 12, 'a', 'l', 'l', 'o', 'w', 'e', 'd', '.', 't', 'e', 's', 't', 0, 80})
	reply, _ := io.ReadAll(c)
	if want := []byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}; string(reply) != string(want) {
		t.Fatalf("reply %v, want %v", reply, want)
	}
}

// TestAddressNotAllowed: an allowed name that resolves to loopback is
// refused, and under -d that is one decision line, which starts with the
// decision (issue 14: it started with "<nil>" and came twice).
func TestAddressNotAllowed(t *testing.T) {
	// A name that resolves to loopback, in a private /etc/hosts that the
	// proxy alone sees (a mount namespace of its own): there is no other
	// way to make srt-proxy's resolver answer one from outside.
	const name = "loopback-name.test"
	hello := `{"t":"hello","proto":1,"allowedDomains":["` + name + `"],"deniedDomains":[]}`
	p := start(t, startOpts{hello: hello, hosts: "127.0.0.1 localhost\n127.0.0.7 " + name + "\n", args: []string{"-d"}})
	got := async(func() string {
		return p.roundTrip("GET http://" + name + "/ HTTP/1.1\r\nHost: " + name + "\r\n\r\n")
	})
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"allow"`))
	want := refusal(403, "Forbidden", "address_not_allowed", "Connection to "+name+" blocked: resolved to a loopback address", false)
	if ans := await(t, got); ans != want {
		t.Errorf("got  %q\nwant %q", ans, want)
	}
	p.expectDecisionLine(`srt proxy: decision=deny reason="resolved to a loopback address" kind=http host=` + name + ` port=80 `)
	// The next line is the next request's: the refusal was logged once.
	p.roundTrip("GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\n")
	p.expectDecisionLine(`srt proxy: decision=deny reason="host is not on the allow list" kind=http host=notallowed.test port=80 `)
}

// expectDecisionLine waits for the next stderr line and checks that it
// starts with prefix and goes on with the record's other fields.
func (p *proc) expectDecisionLine(prefix string) {
	p.t.Helper()
	l := p.line()
	if !strings.HasPrefix(l, prefix) || !strings.Contains(l, " duration_ms=") {
		p.t.Fatalf("decision line %q\nwant it to start %q", l, prefix)
	}
}

// TestDebugUnreachableOnce: an upstream that refuses the connection is one
// decision line under -d, not two.
func TestDebugUnreachableOnce(t *testing.T) {
	upstream := closedAddr(t)
	p := start(t, startOpts{args: []string{"-d"}})
	got := async(func() string {
		return p.roundTrip("GET http://" + upstream + "/ HTTP/1.1\r\nHost: " + upstream + "\r\n\r\n")
	})
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"allow"`))
	await(t, got)
	p.expectDecisionLine(`srt proxy: decision=fail reason="upstream unreachable: ` + upstream)
	p.roundTrip("GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\n")
	p.expectDecisionLine(`srt proxy: decision=deny reason="host is not on the allow list" kind=http host=notallowed.test port=80 `)
}
