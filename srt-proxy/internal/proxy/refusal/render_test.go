package refusal

import (
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

func TestRenderCoversEveryCause(t *testing.T) {
	for c := CauseDenied; c <= CauseInternal; c++ {
		for _, k := range []ask.Kind{ask.KindHTTP, ask.KindConnect, ask.KindSOCKS} {
			a := SRTMode{}.Render(Refusal{Cause: c, Kind: k, Reason: "r", Host: "h"})
			if a.Status < 400 || a.Phrase == "" {
				t.Errorf("%d/%v: %+v", c, k, a)
			}
			if k == ask.KindSOCKS && a.SOCKS == 0 {
				t.Errorf("%d: SOCKS reply 0", c)
			}
		}
		if causeNames[c] == "" {
			t.Errorf("cause %d has no name", c)
		}
	}
}

func TestProxyOnlyRender(t *testing.T) {
	m := ProxyOnlyMode{}
	tests := []struct {
		r                  Refusal
		status             int
		phrase, code, body string
		extraHeader        string
		socks              byte
	}{
		{Refusal{Cause: CauseHostNotAllowed, Kind: ask.KindHTTP}, 403, "Forbidden", CodeHostNotAllowed, "Connection blocked by network allowlist\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseHostNotAllowed, Kind: ask.KindConnect}, 403, "Forbidden", CodeHostNotAllowed, "Connection blocked by network allowlist", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseOpaqueTunnel, Kind: ask.KindConnect}, 403, "Forbidden", CodeOpaqueTunnel, "this proxy does not tunnel CONNECTs it cannot inspect", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseMisdirected, Kind: ask.KindHTTP, Reason: "more than one Host header"}, 421, "Misdirected Request", CodeMisdirected, "more than one Host header\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseBadRequest, Kind: ask.KindHTTP, Reason: "x"}, 400, "Bad Request", CodeBadRequest, "x\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseHeadTooLarge, Kind: ask.KindHTTP, Reason: "request head too large"}, 400, "Bad Request", CodeBadRequest, "request head too large\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseDenied, Kind: ask.KindHTTP, Status: 418, Reason: "no tea"}, 418, "I'm a Teapot", CodeDecider, "no tea\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseRequestDenied, Kind: ask.KindHTTP, Status: 200}, 403, "Forbidden", CodeDecider, "denied by sandbox policy\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseDenied, Kind: ask.KindHTTP, Status: 499}, 499, "unknown", CodeDecider, "denied by sandbox policy\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseUnavailable, Kind: ask.KindHTTP, Reason: "decider timed out"}, 503, "Service Unavailable", CodeDeciderUnavailable, "request decider: decider timed out\n", "", SOCKSGeneralFailure},
		{Refusal{Cause: CauseBodyless, Kind: ask.KindHTTP}, 403, "Forbidden", CodeBodyless, ask.ErrBodylessBody.Error() + "\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseMethodRefused, Kind: ask.KindHTTP, Reason: "the TRACE method is not forwarded"}, 405, "Method Not Allowed", CodeMethodRefused, "the TRACE method is not forwarded\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CausePlaintextHeaderSet, Kind: ask.KindHTTP}, 403, "Forbidden", CodePlaintextHeaderSet, WhyPlaintextHeaderSet + "\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseAddress, Kind: ask.KindHTTP, Host: "a.test", Reason: "resolved to a loopback address"}, 403, "Forbidden", CodeAddressNotAllowed, "Connection to a.test blocked: resolved to a loopback address\n", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseAddress, Kind: ask.KindConnect, Host: "a.test", Reason: "resolved to a loopback address"}, 403, "resolved to a loopback address", CodeAddressNotAllowed, "Connection to a.test blocked: resolved to a loopback address", "", SOCKSNotAllowed},
		{Refusal{Cause: CauseTooManyTunnels, Kind: ask.KindConnect}, 503, "Service Unavailable", CodeTooManyTunnels, "too many TLS-terminated tunnels at once", "Connection: close", SOCKSGeneralFailure},
	}
	for _, tt := range tests {
		a := m.Render(tt.r)
		want := [][2]string{{"Content-Type", "text/plain"}, {"X-Deny-Reason", tt.code}}
		if tt.extraHeader != "" {
			k, v, _ := strings.Cut(tt.extraHeader, ": ")
			want = append(want, [2]string{k, v})
		}
		if a.Status != tt.status || a.Phrase != tt.phrase || a.Body != tt.body || a.SOCKS != tt.socks || len(a.Header) != len(want) {
			t.Errorf("%+v: got %+v", tt.r, a)
			continue
		}
		for i := range want {
			if a.Header[i] != want[i] {
				t.Errorf("%+v: header %d %q, want %q", tt.r, i, a.Header[i], want[i])
			}
		}
	}
	if a := m.Render(Refusal{Cause: CauseUnreachable, Kind: ask.KindHTTP}); a.Status != 502 || a.Body != "Bad Gateway" || len(a.Header) != 1 {
		t.Errorf("unreachable: %+v", a)
	}
}

// TestRenderTLSCauses: both modes render every cause TLS termination adds.
func TestRenderTLSCauses(t *testing.T) {
	for c := CauseRequestDenied; c <= CauseOpaqueTunnel; c++ {
		if causeNames[c] == "" {
			t.Errorf("cause %d has no name", c)
		}
		for _, m := range []Mode{SRTMode{}, ProxyOnlyMode{}} {
			for _, k := range []ask.Kind{ask.KindHTTP, ask.KindConnect, ask.KindSOCKS} {
				a := m.Render(Refusal{Cause: c, Kind: k, Status: 418, Reason: "r", Host: "h"})
				if a.Status < 400 || a.Status == 500 || a.Phrase == "" || k == ask.KindSOCKS && a.SOCKS == 0 {
					t.Errorf("%T %d/%v: %+v", m, c, k, a)
				}
			}
		}
	}
	a := SRTMode{}.Render(Refusal{Cause: CauseRequestDenied, Kind: ask.KindHTTP, Status: 200})
	if a.Status != 403 || a.Body != "denied by sandbox policy\n" {
		t.Errorf("a deny without an error status or a reason: %+v", a)
	}
}
