//go:build linux

package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/protocol"
)

// upstream is an HTTP server on 127.0.0.1 that records each request's raw
// head and its body (de-chunked) and answers with a fixed response.
type upstream struct {
	addr   string
	answer string
	mu     sync.Mutex
	got    []seen
	seenCh chan seen
}

type seen struct {
	head string
	req  *http.Request
	body string
}

func newUpstream(t *testing.T, answer string) *upstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return upstreamOn(l, answer)
}

func (u *upstream) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		var head bytes.Buffer
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head.Bytes())))
		if err != nil {
			return
		}
		var body []byte
		switch {
		case len(req.TransferEncoding) > 0:
			body, _ = io.ReadAll(httputil.NewChunkedReader(br))
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
		case req.ContentLength > 0:
			body = make([]byte, req.ContentLength)
			io.ReadFull(br, body)
		}
		s := seen{head: head.String(), req: req, body: string(body)}
		u.seenCh <- s
		io.WriteString(c, u.answer)
	}
}

func (u *upstream) next(t *testing.T) seen {
	t.Helper()
	select {
	case s := <-u.seenCh:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream got no request")
	}
	return seen{}
}

func TestForwarding(t *testing.T) {
	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Secret: s\r\nX_Secret2: t\r\nX-Public: p\r\nKeep-Alive: timeout=5\r\n\r\nok")
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			p := start(t, startOpts{framing: f, args: []string{"--plaintext-header-set", "--strip-response-header", "x-secret", "x.secret2"}})
			target := "/a/../b%2Fc;p=1?q=1&r=%zz"
			req := "GET http://" + up.addr + target + " HTTP/1.1\r\nHost: " + up.addr + "\r\n" +
				"Proxy-Connection: keep-alive\r\nKeep_Alive: 300\r\nConnection: x-drop\r\nX.Drop: 1\r\n" +
				"Proxy-Authorization: Basic eDp5\r\nAuthorization: old\r\nCOOKIE: c\r\nX_Api_Key: k\r\nX-Keep: k\r\nX-Remove: r\r\nTE: trailers\r\nX-Set: old\r\n\r\n"
			got := async(func() string { return p.roundTrip(req) })
			id, r := p.dec.nextReq()
			if r.Path != "/a/../b%2Fc;p=1" || r.Query == nil || *r.Query != "q=1&r=%zz" {
				t.Errorf("decider saw path %q query %v", r.Path, r.Query)
			}
			if names := headerNames(r.Headers); names != "proxy-connection keep_alive connection x.drop proxy-authorization authorization cookie x_api_key x-keep x-remove te x-set" {
				t.Errorf("decider saw headers %s", names)
			}
			p.dec.send(verdict(id, `"action":"allow","setHeaders":{"x-set":["1","2"],"x-keep":[]},"removeHeaders":["x-remove"],"cred":"api","credential":"tok"`))
			s := up.next(t)
			if want := "GET " + target + " HTTP/1.1\r\n"; !strings.HasPrefix(s.head, want) {
				t.Errorf("upstream request line %q, want %q", strings.SplitN(s.head, "\r\n", 2)[0], want)
			}
			h := s.req.Header
			if s.req.Host != up.addr {
				t.Errorf("Host %q", s.req.Host)
			}
			for _, gone := range []string{"Proxy-Connection", "Keep_alive", "Keep-Alive", "Connection", "X.drop", "Proxy-Authorization", "Cookie", "X_api_key", "X-Keep", "X-Remove", "Te"} {
				if v, ok := h[http.CanonicalHeaderKey(gone)]; ok {
					t.Errorf("%s forwarded: %q", gone, v)
				}
			}
			if strings.Contains(strings.ToLower(s.head), "keep_alive") || strings.Contains(strings.ToLower(s.head), "x.drop") || strings.Contains(strings.ToLower(s.head), "x_api_key") {
				t.Errorf("a folded hop-by-hop or credential header went upstream:\n%s", s.head)
			}
			if got := h.Values("X-Set"); strings.Join(got, ",") != "1,2" {
				t.Errorf("X-Set %q", got)
			}
			if got := h.Get("Authorization"); got != "Bearer tok" {
				t.Errorf("Authorization %q", got)
			}
			want := "HTTP/1.1 200 OK\r\nX-Public: p\r\nContent-Length: 2\r\n\r\nok"
			if ans := await(t, got); ans != want {
				t.Errorf("client got %q\nwant %q", ans, want)
			}
		})
	}
}

func headerNames(h protocol.Headers) string {
	var names []string
	for _, f := range h {
		names = append(names, f.Name)
	}
	return strings.Join(names, " ")
}

func TestNeedBody(t *testing.T) {
	up := newUpstream(t, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
	for _, f := range framings {
		t.Run(f.String(), func(t *testing.T) {
			p := start(t, startOpts{framing: f})
			for _, tc := range []struct {
				name, framing, wire, body string
			}{
				{"content-length", "Content-Length: 16\r\n", "0123456789abcdef", "0123456789abcdef"},
				{"chunked", "Transfer-Encoding: chunked\r\n", "6\r\n012345\r\n6\r\n6789ab\r\n4\r\ncdef\r\n0\r\nX-Trailer: t\r\n\r\n", "0123456789abcdef"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := p.dial()
					io.WriteString(c, "POST http://"+up.addr+"/upload HTTP/1.1\r\nHost: "+up.addr+"\r\n"+tc.framing+"\r\n")
					id, _ := p.dec.nextReq()
					p.dec.send(verdict(id, `"action":"need_body","max":10`))
					io.WriteString(c, tc.wire)
					body := nextBody(t, p.dec)
					if body.ID != id || string(body.Data) != "0123456789" || !body.Cut {
						t.Fatalf("body %d %q cut %v", body.ID, body.Data, body.Cut)
					}
					p.dec.send(verdict(id, `"action":"allow"`))
					s := up.next(t)
					if s.body != tc.body {
						t.Errorf("upstream body %q, want %q", s.body, tc.body)
					}
					if strings.Contains(s.head, "X-Trailer") {
						t.Error("a trailer went upstream")
					}
					if ans := readAnswer(t, c, bufio.NewReader(c)); !strings.HasPrefix(ans, "HTTP/1.1 201 Created\r\n") {
						t.Errorf("client got %q", ans)
					}
				})
			}
			t.Run("whole body, uncut", func(t *testing.T) {
				got := async(func() string {
					return p.roundTrip("PUT http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\nContent-Length: 5\r\n\r\nhello")
				})
				id, _ := p.dec.nextReq()
				p.dec.send(verdict(id, `"action":"need_body","max":5`))
				if body := nextBody(t, p.dec); string(body.Data) != "hello" || body.Cut {
					t.Fatalf("body %q cut %v", body.Data, body.Cut)
				}
				p.dec.send(verdict(id, `"action":"deny","status":403,"reason":"no uploads"`))
				if want, ans := refusal(403, "Forbidden", "decider", "no uploads", true), await(t, got); ans != want {
					t.Errorf("got %q", ans)
				}
			})
			t.Run("GET without a body", func(t *testing.T) {
				got := async(func() string {
					return p.roundTrip("GET http://" + up.addr + "/ HTTP/1.1\r\nHost: " + up.addr + "\r\n\r\n")
				})
				id, _ := p.dec.nextReq()
				p.dec.send(verdict(id, `"action":"need_body","max":5`))
				if body := nextBody(t, p.dec); len(body.Data) != 0 || body.Cut {
					t.Fatalf("body %q cut %v", body.Data, body.Cut)
				}
				p.dec.send(verdict(id, `"action":"allow"`))
				up.next(t)
				if ans := await(t, got); !strings.HasPrefix(ans, "HTTP/1.1 201") {
					t.Errorf("got %q", ans)
				}
			})
			t.Run("deny while the body is read", func(t *testing.T) {
				c := p.dial()
				io.WriteString(c, "POST http://"+up.addr+"/ HTTP/1.1\r\nHost: "+up.addr+"\r\nContent-Length: 100\r\n\r\npart")
				id, _ := p.dec.nextReq()
				p.dec.send(verdict(id, `"action":"need_body","max":100`))
				time.Sleep(100 * time.Millisecond)
				p.dec.send(verdict(id, `"action":"deny","status":413,"reason":"too slow"`))
				if want, ans := refusal(413, "Payload Too Large", "decider", "too slow", true), readAnswer(t, c, bufio.NewReader(c)); ans != want {
					t.Errorf("got %q", ans)
				}
			})
		})
	}
}

func nextBody(t *testing.T, d *decider) *protocol.Body {
	t.Helper()
	b := d.next()
	m, err := protocol.DecodeProxyMessage(b, false)
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	body, ok := m.(*protocol.Body)
	if !ok {
		t.Fatalf("proxy sent %q, want a body", b)
	}
	return body
}

func TestBodyBudget(t *testing.T) {
	p := start(t, startOpts{})
	const max = 32 << 20
	head := "POST http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: " + strconv.Itoa(max) + "\r\n\r\n"
	var conns []net.Conn
	for i := 0; i < 2; i++ {
		c := p.dial()
		io.WriteString(c, head) // and no body: the reservation is held while it is awaited
		id, _ := p.dec.nextReq()
		p.dec.send(verdict(id, `"action":"need_body","max":33554432`))
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond)
	got := async(func() string { return p.roundTrip(head) })
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"need_body","max":33554432`))
	want := refusal(503, "Service Unavailable", "decider_unavailable", "request decider: too many request bodies held for inspection", true)
	if ans := await(t, got); ans != want {
		t.Fatalf("got %q\nwant %q", ans, want)
	}
	// The link lives: the held requests can still be denied, and a new
	// request is asked about.
	for i, c := range conns {
		p.dec.send(verdict(uint64(i+1), `"action":"deny","status":403`))
		if ans := readAnswer(t, c, bufio.NewReader(c)); !strings.HasPrefix(ans, "HTTP/1.1 403 Forbidden\r\n") {
			t.Errorf("held request %d got %q", i+1, ans)
		}
	}
	got = async(func() string { return p.roundTrip("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
	id, _ = p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"deny","status":451`))
	if ans := await(t, got); !strings.HasPrefix(ans, "HTTP/1.1 451 ") {
		t.Errorf("got %q", ans)
	}
}
