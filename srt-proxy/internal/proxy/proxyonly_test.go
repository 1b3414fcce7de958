package proxy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/decide"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/proxyonly"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// proxyOnlyFuzzAsker reads bodies as a decider asking for them would.
type proxyOnlyFuzzAsker struct{}

func (proxyOnlyFuzzAsker) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	switch {
	case strings.Contains(r.Path, "body") && r.Body != nil:
		if r.Body.Hidden() {
			if b, _, _ := r.Body.Read(1); len(b) > 0 {
				return ask.Verdict{}, ask.ErrBodylessBody
			}
		} else if _, _, err := r.Body.Read(r.Body.Reserve(8)); err != nil {
			return ask.Verdict{}, errors.New("reading: " + err.Error())
		}
	case strings.Contains(r.Host, "fail"):
		return ask.Verdict{}, errors.New("decider closed the stream")
	case strings.Contains(r.Path, "deny"):
		return ask.Verdict{Status: 418, Reason: "no"}, nil
	case strings.Contains(r.Path, "set"):
		return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-set": {"1"}}}, nil
	}
	return ask.Verdict{Allow: true, SetHeaders: map[string][]string{"x-gone": nil}, RemoveHeaders: []string{"x-remove"}}, nil
}

func (proxyOnlyFuzzAsker) Refused(*ask.Request, string) {}

func proxyOnlyFuzzServer() *Server {
	s := fuzzServer()
	s.Token = ""
	s.Asker = proxyOnlyFuzzAsker{}
	s.Mode = refusal.ProxyOnlyMode{}
	s.MaxHeadBytes = proxyonly.HeadLimit
	gate, err := decide.NewHostGate([]string{"a.test", "*.a.test", "loop.test", "down.test", "fail.test", "::1", "192.0.2.1"}, []string{"deny.a.test"})
	if err != nil {
		panic(err)
	}
	s.ProxyOnly = gate
	s.Rules.StripResponseHeaders = []string{"x-hop"}
	return s
}

func FuzzProxyOnlyConn(f *testing.F) {
	for _, s := range []string{
		"GET http://a.test/x?y HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://deny.a.test/ HTTP/1.1\r\nHost: deny.a.test\r\n\r\n",
		"POST http://a.test/body HTTP/1.1\r\nHost: a.test\r\nContent-Length: 12\r\nX_Remove: 1\r\n\r\nabcdefghijkl",
		"POST http://a.test/body HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3\r\nabc\r\n9\r\ndefghijkl\r\n0\r\nT: 1\r\n\r\n",
		"GET http://a.test/body HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx",
		"GET http://a.test/set HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"TRACE http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
		"HEAD http://loop.test:8080/ HTTP/1.0\r\n\r\n",
		"GET http://down.test/ HTTP/1.1\r\nHost: down.test\r\n\r\n",
		"GET http://fail.test/ HTTP/1.1\r\nHost: fail.test\r\n\r\n",
		"GET http://[::1]:80/a/../b HTTP/1.1\r\nHost: [::1]\r\nConnection: close, x\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01",
		"CONNECT b.test:443 HTTP/1.1\r\n\r\n",
		"GET /origin HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://u@a.test/#x HTTP/1.1\r\nHost: a.test\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		converse(t, proxyOnlyFuzzServer(), data)
	})
}
