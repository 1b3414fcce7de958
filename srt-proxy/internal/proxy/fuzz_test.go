package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// fuzzAsker allows, denies or fails depending on the request, so every
// path after the decision is reachable.
type fuzzAsker struct{}

func (fuzzAsker) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	switch {
	case strings.Contains(r.Host, "fail"):
		return ask.Verdict{}, errors.New("decider closed the stream")
	case strings.Contains(r.Host, "deny") || strings.Contains(r.Path, "deny"):
		return ask.Verdict{Status: 403, Reason: "no\r\n<é>"}, nil
	}
	return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1"}}, RemoveHeaders: []string{"x-remove"}}, nil
}

func (fuzzAsker) Refused(*ask.Request, string) {}

// pipeUpstream is a Dial that connects to an in-memory upstream: an HTTP
// server answering every request it can parse, closing on anything else.
func pipeUpstream(_ context.Context, _, addr string) (net.Conn, error) {
	if strings.HasPrefix(addr, "192.0.2.99") {
		return nil, errors.New("connection refused")
	}
	a, b := net.Pipe()
	go func() {
		defer b.Close()
		br := bufio.NewReader(b)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(b, "HTTP/1.1 200 OK\r\nConnection: x-hop\r\nX-Hop: 1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
		}
	}()
	return a, nil
}

func fuzzServer() *Server {
	return &Server{
		Asker: fuzzAsker{},
		Token: testToken,
		Dialer: &dial.Dialer{
			HostAddrs: func() []netip.Addr { return nil },
			Resolve: func(_ context.Context, _, host string) ([]netip.Addr, error) {
				switch {
				case strings.HasPrefix(host, "loop"):
					return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
				case strings.HasPrefix(host, "down"):
					return []netip.Addr{netip.MustParseAddr("192.0.2.99")}, nil
				}
				return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
			},
			Dial: pipeUpstream,
		},
		FirstByteTimeout: time.Second,
		MaxHeadBytes:     4 << 10,
	}
}

// converse feeds data to one connection of server s over net.Pipe,
// reading whatever comes back, fails if the connection does not end, and
// closes s.
func converse(t *testing.T, s *Server, data []byte) {
	s.init()
	client, server := net.Pipe()
	c := &serve.Conn{Raw: server}
	if !s.track(c) {
		t.Fatal("server closed")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveConn(c)
	}()
	go io.Copy(io.Discard, client)
	client.SetWriteDeadline(time.Now().Add(3 * time.Second))
	client.Write(data)
	client.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the connection did not end for input %q", data)
	}
	s.Close()
}

func socksSeed(user, pass string, req ...byte) []byte {
	b := []byte{5, 2, 0, 2, 1, byte(len(user))}
	b = append(b, user...)
	b = append(b, byte(len(pass)))
	b = append(b, pass...)
	return append(b, req...)
}

func FuzzSOCKS5(f *testing.F) {
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 3, 6, 'a', '.', 't', 'e', 's', 't', 1, 187, 'h', 'i'))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 1, 192, 0, 2, 1, 0, 80))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 3, 9, 'l', 'o', 'o', 'p', '.', 't', 'e', 's', 't', 0, 80))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 3, 6, 'd', 'e', 'n', 'y', '.', 'x', 0, 80))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 3, 6, 'f', 'a', 'i', 'l', '.', 'x', 0, 80))
	f.Add(socksSeed("srt", testToken, 5, 1, 0, 3, 6, 'd', 'o', 'w', 'n', '.', 'x', 0, 80))
	f.Add(socksSeed("srt", "wrong", 5, 1, 0, 1, 1, 2, 3, 4, 0, 80))
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 10, 'g', 'i', 't', 'h', 'u', 'b', '.', 'c', 'o', 'm', 0, 22})
	f.Add([]byte{5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 0})
	f.Add([]byte{4, 1, 0, 80, 1, 2, 3, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			return // longer inputs exercise nothing more
		}
		if len(data) > 0 && data[0] != 5 && data[0] != 4 {
			data = append([]byte{5}, data...)
		}
		converse(t, fuzzServer(), data)
	})
}

func FuzzHTTPConn(f *testing.F) {
	auth := "Proxy-Authorization: " + basicAuth("srt", testToken) + "\r\n"
	for _, s := range []string{
		"GET http://a.test/x?y HTTP/1.1\r\nHost: a.test\r\n" + auth + "\r\n",
		"GET http://a.test/ HTTP/1.1\r\n" + auth + "\r\nGET http://deny.test/ HTTP/1.1\r\n" + auth + "\r\n",
		"POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nX-Remove: 1\r\n" + auth + "\r\nabc",
		"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n" + auth + "\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n",
		"HEAD http://loop.test:8080/ HTTP/1.0\r\n" + auth + "\r\n",
		"GET http://down.test/ HTTP/1.1\r\n" + auth + "\r\n",
		"GET http://fail.test/ HTTP/1.1\r\n" + auth + "\r\n",
		"GET http://[::1]:80/ HTTP/1.1\r\nConnection: close, x\r\n" + auth + "\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\n" + auth + "\r\n\x16\x03\x01",
		"CONNECT deny.test:443 HTTP/1.1\r\n" + auth + "\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"GET /origin HTTP/1.1\r\nHost: a\r\n\r\n",
		"\r\n\r\nGET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return // past the 4 KiB head limit the fuzz server sets
		}
		if len(data) > 0 && (data[0] == 4 || data[0] == 5) {
			return // SOCKS, FuzzSOCKS5's business
		}
		converse(t, fuzzServer(), data)
	})
}
