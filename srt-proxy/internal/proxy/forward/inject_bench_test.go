package forward

import (
	"bufio"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/serve"
)

// BenchmarkInjectMasksHead: what putting two masks back costs a bodiless
// request of an API client (a sentinel in Authorization among five other
// fields): the whole of injectMasks, sigv4's look at it included. Compare
// with the proxy's CPU time per terminated request (scripts/bench tls).
func BenchmarkInjectMasksHead(b *testing.B) {
	raw := "GET /v1/items HTTP/1.1\r\nHost: api.test\r\nUser-Agent: bench-client/1.0\r\nAccept: application/json\r\n" +
		"Accept-Encoding: identity\r\nAuthorization: Bearer fake_value_0b6c2e8a-5f1d-4c3b-9e7a-2d4f6a8b0c1e\r\nX-Request-Id: 0123456789abcdef\r\n\r\n"
	head, err := http1.ReadHead(bufio.NewReader(strings.NewReader(raw)), 1<<16)
	if err != nil {
		b.Fatal(err)
	}
	v := ask.Verdict{Allow: true, Inject: []ask.Mask{
		{ID: "a", Sentinel: "fake_value_0b6c2e8a-5f1d-4c3b-9e7a-2d4f6a8b0c1e", Value: "ghp_0123456789abcdefghijklmnopqrstuvwxyz"},
		{ID: "b", Sentinel: "fake_value_7e3a9c1b-2d4f-4a6b-8c0e-1f3a5b7c9d2e", Value: "xoxb-0123456789"},
	}}
	h := &Conn{Env: &serve.Env{Rules: &rules.Rules{}}}
	for b.Loop() {
		ex := &Exchange{Head: head, Verdict: v, Inject: true, Target: "/v1/items", HostHeader: "api.test", Rec: serve.NewRecord("https")}
		if _, ok := h.injectMasks(ex); !ok || !strings.HasPrefix(ex.Head.Values("authorization")[0], "Bearer ghp_") {
			b.Fatal("not injected")
		}
	}
}
