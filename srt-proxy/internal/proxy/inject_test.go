package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/forward"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/refusal"
)

// Masked secrets (srt.mask.v1) as srt makes them: a value shorter than
// the sentinel's fixed part (the body changes length), and one as long
// as its sentinel (it does not). maskOther is live but named by no allow.
var (
	maskShort = ask.Mask{ID: "cmd1.0", Sentinel: "fake_value_0b6c2e8a-5f1d-4c3b-9e7a-2d4f6a8b0c1e", Value: "ghp_REALTOKEN"}
	maskSame  = ask.Mask{ID: "cmd1.1", Sentinel: "fake_value_7e3a9c1b-2d4f-4a6b-8c0e-1f3a5b7c9d2e_x0y9", Value: "sk-live-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"}
	maskOther = ask.Mask{ID: "cmd2.0", Sentinel: "fake_value_4c1d8e2f-9a3b-4e5c-b7d6-0a1b2c3d4e5f", Value: "OTHER-SECRET"}
)

// seenRequest is what an upstream received.
type seenRequest struct {
	header        http.Header
	body          string
	contentLength int64
	chunked       bool
}

// recorder is an upstream handler that records each request whole.
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	rc.seen = append(rc.seen, seenRequest{header: r.Header.Clone(), body: string(body), contentLength: r.ContentLength,
		chunked: len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"})
	rc.mu.Unlock()
	io.WriteString(w, "ok")
}

func (rc *recorder) last(t *testing.T) seenRequest {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.seen) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return rc.seen[len(rc.seen)-1]
}

// injecting is a decider's allow naming masks for every request.
func injecting(masks ...ask.Mask) func(*ask.Request) (ask.Verdict, error) {
	return func(*ask.Request) (ask.Verdict, error) { return ask.Verdict{Allow: true, Inject: masks}, nil }
}

// TestInjectTerminated: inside a TLS-terminated tunnel the named masks'
// sentinels become their values in headers and bodies (Content-Length,
// same length and not; chunked; split across TLS records and TCP writes),
// not in a body with a Content-Encoding; a sentinel not named goes as it
// is; the tunnel is kept across requests.
func TestInjectTerminated(t *testing.T) {
	rc := &recorder{}
	f := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(maskShort, maskSame)})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	send := func(head string, pieces ...string) {
		t.Helper()
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(tc, head); err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			time.Sleep(5 * time.Millisecond) // its own TLS record and TCP segment
			if _, err := io.WriteString(tc, p); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	}
	short, same, other := maskShort.Sentinel, maskSame.Sentinel, maskOther.Sentinel

	t.Run("headers", func(t *testing.T) {
		send("GET /h HTTP/1.1\r\nHost: echo.test\r\nAuthorization: Bearer " + short + "\r\nX-Two: " + same + "," + short + "\r\nX-Other: " + other + "\r\n\r\n")
		got := rc.last(t)
		if a := got.header.Get("Authorization"); a != "Bearer "+maskShort.Value {
			t.Errorf("Authorization: %q", a)
		}
		if v := got.header.Get("X-Two"); v != maskSame.Value+","+maskShort.Value {
			t.Errorf("X-Two: %q", v)
		}
		if v := got.header.Get("X-Other"); v != other {
			t.Errorf("a sentinel no allow named: %q", v)
		}
	})
	t.Run("length kept", func(t *testing.T) {
		body := `{"token":"` + same + `"}`
		half := len(body) / 2
		send("POST /b HTTP/1.1\r\nHost: echo.test\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n", body[:half], body[half:])
		got := rc.last(t)
		if want := `{"token":"` + maskSame.Value + `"}`; got.body != want || got.contentLength != int64(len(want)) {
			t.Errorf("body %q (length %d)", got.body, got.contentLength)
		}
	})
	t.Run("length changed", func(t *testing.T) {
		body := "a=" + short + "&b=" + other + "&c=" + short
		cut := 2 + 20 // inside the first sentinel
		send("POST /b HTTP/1.1\r\nHost: echo.test\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n", body[:cut], body[cut:])
		got := rc.last(t)
		want := "a=" + maskShort.Value + "&b=" + other + "&c=" + maskShort.Value
		if got.body != want || got.contentLength != int64(len(want)) || got.chunked {
			t.Errorf("body %q length %d chunked %v; want %q", got.body, got.contentLength, got.chunked, want)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		// The sentinel is cut by the chunks, and by the writes within one.
		chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
		p1, p2, p3 := "x "+short[:10], short[10:30], short[30:]+" y "+same
		send("POST /c HTTP/1.1\r\nHost: echo.test\r\nTransfer-Encoding: chunked\r\n\r\n",
			chunk(p1), chunk(p2)[:7], chunk(p2)[7:], chunk(p3), "0\r\n\r\n")
		got := rc.last(t)
		if want := "x " + maskShort.Value + " y " + maskSame.Value; got.body != want || !got.chunked {
			t.Errorf("body %q chunked %v", got.body, got.chunked)
		}
	})
	t.Run("content-encoding", func(t *testing.T) {
		body := "not really gzip " + short
		send("POST /g HTTP/1.1\r\nHost: echo.test\r\nContent-Encoding: gzip\r\nX-Key: "+short+"\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n", body)
		got := rc.last(t)
		if got.body != body {
			t.Errorf("an encoded body was changed: %q", got.body)
		}
		if v := got.header.Get("X-Key"); v != maskShort.Value {
			t.Errorf("headers of an encoded body: %q", v)
		}
	})
	// One tunnel carried them all. (Its upstream connection is usually
	// one too, but forward cuts it when the response is relayed before
	// the body sender's goroutine has reported, with or without masks.)
	if n := len(rc.seen); n != 5 {
		t.Errorf("the upstream received %d requests, want 5", n)
	}
}

// TestInjectTerminatedTooLarge: a Content-Length body over 64 MiB whose
// masks change its length is refused (403 inject_refused, the decider
// told), before a byte of it is read or anything forwarded.
func TestInjectTerminatedTooLarge(t *testing.T) {
	rc := &recorder{}
	f := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(maskShort)})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp, body := do(t, tc, br, "PUT /big HTTP/1.1\r\nHost: echo.test\r\nContent-Length: "+strconv.Itoa(refusal.MaxMaskedBody+1)+"\r\n\r\n")
	if resp.StatusCode != 403 || strings.TrimSpace(body) != refusal.WhyMaskedBodyTooLarge || resp.Header.Get("X-Proxy-Error") != "blocked-by-sandbox-runtime" || !resp.Close {
		t.Fatalf("%d %q %v close=%v", resp.StatusCode, body, resp.Header, resp.Close)
	}
	if got := f.asker.refusals(); len(got) != 1 || got[0] != "echo.test "+refusal.WhyMaskedBodyTooLarge {
		t.Errorf("the decider was told %q", got)
	}
	if len(rc.seen) != 0 {
		t.Errorf("forwarded: %+v", rc.seen)
	}
	// The same length with values as long as their sentinels streams.
	f2 := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(maskSame)})
	tc2, br2 := f2.tunnel(f2.target("echo.test"), "echo.test")
	tc2.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(tc2, "PUT /big HTTP/1.1\r\nHost: echo.test\r\nContent-Length: %d\r\n\r\n", refusal.MaxMaskedBody+1)
	go func() {
		buf := make([]byte, 1<<20)
		for left := refusal.MaxMaskedBody + 1; left > 0; left -= min(left, len(buf)) {
			if _, err := tc2.Write(buf[:min(left, len(buf))]); err != nil {
				return
			}
		}
	}()
	resp2, err := http.ReadResponse(br2, nil)
	if err != nil || resp2.StatusCode != 200 {
		t.Fatalf("a same-length body over the limit: %v %v", resp2, err)
	}
	if got := rc.last(t); got.contentLength != refusal.MaxMaskedBody+1 {
		t.Errorf("forwarded length %d", got.contentLength)
	}
}

// TestInjectHeaderLineBreak: a value with a line break (a whole file
// masked, say) put in a header would end it upstream and start another:
// the request is refused and nothing forwarded; in a body it goes.
func TestInjectHeaderLineBreak(t *testing.T) {
	pem := ask.Mask{ID: "cmd1.2", Sentinel: "fake_value_1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", Value: "line one\r\nX-Smuggled: yes"}
	rc := &recorder{}
	f := newTLSFixture(t, fixtureOpts{handler: rc, answer: injecting(pem)})
	tc, br := f.tunnel(f.target("echo.test"), "echo.test")
	resp, body := do(t, tc, br, "GET / HTTP/1.1\r\nHost: echo.test\r\nX-Key: "+pem.Sentinel+"\r\n\r\n")
	if resp.StatusCode != 403 || strings.TrimSpace(body) != refusal.WhyMaskedHeaderBreak {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if len(rc.seen) != 0 {
		t.Fatalf("forwarded: %+v", rc.seen)
	}
	tc, br = f.tunnel(f.target("echo.test"), "echo.test")
	resp, _ = do(t, tc, br, "POST / HTTP/1.1\r\nHost: echo.test\r\nTransfer-Encoding: chunked\r\n\r\n"+fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(pem.Sentinel), pem.Sentinel))
	if got := rc.last(t); resp.StatusCode != 200 || got.body != pem.Value {
		t.Fatalf("%d %q", resp.StatusCode, got.body)
	}
}

// TestInjectPlainHTTP: on plain HTTP the masks are put back only with
// Rules.PlaintextInject (--plaintext-inject); without it the sentinels
// go as they are and nothing is refused.
func TestInjectPlainHTTP(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("plaintextInject=%v", on), func(t *testing.T) {
			up := newUpstream(t, nil)
			a := &fakeAsker{answer: injecting(maskShort)}
			var log logBuffer
			addr, _ := startProxy(t, a, func(s *Server) {
				s.Rules.PlaintextInject = on
				s.Logger = zerolog.New(&log)
			})
			c := dialProxy(t, addr)
			br := bufio.NewReader(c)
			body := "t=" + maskShort.Sentinel
			fmt.Fprintf(c, "POST %s/p HTTP/1.1\r\nHost: %s\r\nX-Token: %s\r\nContent-Length: %d\r\n\r\n%s", up.URL, up.Listener.Addr(), maskShort.Sentinel, len(body), body)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			io.ReadAll(resp.Body)
			up.mu.Lock()
			defer up.mu.Unlock()
			want, wantBody := maskShort.Sentinel, body
			if on {
				want, wantBody = maskShort.Value, "t="+maskShort.Value
			}
			if got := up.headers[0].Get("X-Token"); got != want {
				t.Errorf("X-Token %q, want %q", got, want)
			}
			if up.bodies[0] != wantBody {
				t.Errorf("body %q, want %q", up.bodies[0], wantBody)
			}
			// The decision record says what became of the masks, and
			// never holds a value.
			c.Close()
			note := forward.InjectNotPlaintext
			if on {
				note = forward.InjectDone
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(log.String(), `"inject":"`+note+`"`) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if l := log.String(); !strings.Contains(l, `"inject":"`+note+`"`) || strings.Contains(l, maskShort.Value) {
				t.Errorf("decision record: %s", l)
			}
		})
	}
}
