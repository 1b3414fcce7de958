package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
)

// The cost of putting masked secrets back, measured with the TLS
// termination benchmarks' children (terminate_bench_test.go): the proxy
// child's decider names benchMasks for every request whose path starts
// with /mask, and nothing for the others, which carry the same bytes.
//
//	CGO_ENABLED=0 go test -run '^$' -bench TerminatedMasked ./srt-proxy/internal/proxy/
//	SRT_PROXY_TLS_BENCH=1 go test -run TestTerminatedMaskedCost -v ./srt-proxy/internal/proxy/

var (
	// benchHeaderMask is as srt makes one for a short token: the sentinel
	// longer than the value.
	benchHeaderMask = ask.Mask{ID: "b.0", Sentinel: "fake_value_0b6c2e8a-5f1d-4c3b-9e7a-2d4f6a8b0c1e", Value: "ghp_0123456789abcdefghijklmnopqrstuvwxyz"}
	// benchBodyMask is as srt makes one for a value of 64 bytes or more:
	// as long as it, so a body keeps its length and streams.
	benchBodyMask = ask.Mask{ID: "b.1", Sentinel: "fake_value_7e3a9c1b-2d4f-4a6b-8c0e-1f3a5b7c9d2e_0123456789abcdefghi", Value: "sk-live-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"}
)

// benchMaskAsker allows everything, naming both masks for /mask… and
// the body mask alone for /mask/up….
type benchMaskAsker struct{}

func (benchMaskAsker) Ask(_ context.Context, r *ask.Request) (ask.Verdict, error) {
	if strings.HasPrefix(r.Path, "/mask/up") {
		// One value as long as its sentinel: the body streams.
		return ask.Verdict{Allow: true, Inject: []ask.Mask{benchBodyMask}}, nil
	}
	if strings.HasPrefix(r.Path, "/mask") {
		return ask.Verdict{Allow: true, Inject: []ask.Mask{benchHeaderMask, benchBodyMask}}, nil
	}
	return ask.Verdict{Allow: true}, nil
}
func (benchMaskAsker) Refused(*ask.Request, string) {}

// uploaded is the upstream's answer to a POST: how many body bytes it
// read, and whether its first bytes are the body mask's value.
func uploaded(w http.ResponseWriter, r *http.Request) {
	head := make([]byte, len(benchBodyMask.Value))
	k, _ := io.ReadFull(r.Body, head)
	n, _ := io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "%d %v", int64(k)+n, string(head[:k]) == benchBodyMask.Value)
}

// benchRequest is a request of an agent's API client: a masked token in
// Authorization, the usual headers around it.
func benchRequest(path string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: data.test\r\nUser-Agent: bench-client/1.0\r\nAccept: application/json\r\n" +
		"Accept-Encoding: identity\r\nAuthorization: Bearer " + benchHeaderMask.Sentinel + "\r\nX-Request-Id: 0123456789abcdef\r\n\r\n"
}

// requests sends n requests on one tunnel and returns how long they took.
func (tb *tlsBench) requests(t testing.TB, path string, n int) (time.Duration, error) {
	tc, err := tb.open(t, "data.test", tb.mitmPool)
	if err != nil {
		return 0, err
	}
	defer tc.Close()
	br := bufio.NewReader(tc)
	req := []byte(benchRequest(path))
	buf := make([]byte, 4096)
	start := time.Now()
	for range n {
		if _, err := tc.Write(req); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
	return time.Since(start), nil
}

// upload POSTs size bytes (the body mask's sentinel first, zeros after)
// on a tunnel to path, and checks what the upstream says it read.
func (tb *tlsBench) upload(t testing.TB, path string, size int64) (time.Duration, error) {
	tc, err := tb.open(t, "data.test", tb.mitmPool)
	if err != nil {
		return 0, err
	}
	defer tc.Close()
	chunk := make([]byte, 256<<10)
	start := time.Now()
	fmt.Fprintf(tc, "POST %s HTTP/1.1\r\nHost: data.test\r\nContent-Length: %d\r\n\r\n", path, size)
	done := make(chan error, 1)
	go func() {
		first := true
		for left := size; left > 0; {
			c := chunk[:min(left, int64(len(chunk)))]
			if first {
				c = append(append([]byte(nil), benchBodyMask.Sentinel...), chunk[:len(c)-len(benchBodyMask.Sentinel)]...)
				first = false
			}
			if _, err := tc.Write(c); err != nil {
				done <- err
				return
			}
			left -= int64(len(c))
		}
		done <- nil
	}()
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	if err := <-done; err != nil {
		return 0, fmt.Errorf("%s: answered %d %q, then: %w", path, resp.StatusCode, body, err)
	}
	d := time.Since(start)
	want := fmt.Sprintf("%d %v", size, strings.HasPrefix(path, "/mask"))
	if string(body) != want {
		return 0, fmt.Errorf("the upstream read %q, want %q", body, want)
	}
	return d, nil
}

// BenchmarkTerminatedMasked: requests on one terminated tunnel with a
// sentinel in Authorization, the decider naming its mask (masked) or
// nothing (plain); a 256 MiB upload with the body mask's sentinel in it,
// named (masked: the body is scanned as it streams) or not.
func BenchmarkTerminatedMasked(b *testing.B) {
	tb := startTLSBench(b)
	for _, mode := range []string{"plain", "masked"} {
		path := map[string]string{"plain": "/plain", "masked": "/mask"}[mode]
		b.Run("requests/"+mode, func(b *testing.B) {
			n := b.N
			b.ResetTimer()
			d, err := tb.requests(b, path, n)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/d.Seconds(), "req/s")
		})
		b.Run("upload/"+mode, func(b *testing.B) {
			b.SetBytes(256 << 20)
			for b.Loop() {
				if _, err := tb.upload(b, path+"/up", 256<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTerminatedMaskedCost measures, in one run, best of five each,
// interleaved: requests per second on a terminated tunnel with a sentinel
// in a header, its mask named vs not (target: under 5% slower); and a
// 256 MiB upload with its body scanned vs not (target: at least 0.5×).
// It is a benchmark, run by scripts/bench tls with SRT_PROXY_TLS_BENCH=1.
func TestTerminatedMaskedCost(t *testing.T) {
	if len(benchBodyMask.Sentinel) != len(benchBodyMask.Value) {
		t.Fatal("benchBodyMask: the value must be as long as the sentinel, so that the body streams")
	}
	if os.Getenv("SRT_PROXY_TLS_BENCH") != "1" || raceEnabled {
		t.Skip("set SRT_PROXY_TLS_BENCH=1 (and no race detector) to measure")
	}
	tb := startTLSBench(t)
	const requests, size = 2000, 256 << 20
	best := map[string]time.Duration{}
	keep := func(k string, d time.Duration, err error) {
		if err != nil {
			t.Fatal(err)
		}
		if best[k] == 0 || d < best[k] {
			best[k] = d
		}
	}
	// The proxy's CPU time per request, which other processes on the
	// machine do not stretch as they do the wall clock.
	cpu := map[string]time.Duration{}
	for range 5 {
		for _, path := range []string{"/plain", "/mask"} {
			before := cpuTime(t, tb.proxyPID)
			d, err := tb.requests(t, path, requests)
			if used := cpuTime(t, tb.proxyPID) - before; cpu[path] == 0 || used < cpu[path] {
				cpu[path] = used
			}
			keep("requests"+path, d, err)
			d, err = tb.upload(t, path+"/up", size)
			keep("upload"+path, d, err)
		}
	}
	rps := func(k string) float64 { return requests / best[k].Seconds() }
	mbps := func(k string) float64 { return size / best[k].Seconds() / (1 << 20) }
	cost := 100 * (1 - rps("requests/mask")/rps("requests/plain"))
	fmt.Printf("  masked header      %.0f req/s its mask named, %.0f not: cost %+.1f%%   (target < 5%%)\n", rps("requests/mask"), rps("requests/plain"), cost)
	perReq := func(p string) float64 { return float64(cpu[p].Microseconds()) / requests }
	fmt.Printf("  masked header      srt-proxy CPU %.1f µs per request its mask named, %.1f not: cost %+.1f%%   (target < 5%%)\n",
		perReq("/mask"), perReq("/plain"), 100*(perReq("/mask")/perReq("/plain")-1))
	fmt.Printf("  256 MiB upload     %.0f MiB/s its body scanned, %.0f not: ratio %.2f   (target >= 0.5)\n", mbps("upload/mask"), mbps("upload/plain"), mbps("upload/mask")/mbps("upload/plain"))
}

// cpuTime is the CPU time process pid's threads have run (the sum of
// /proc/<pid>/task/*/schedstat's first field, nanoseconds).
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	var ns int64
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			ns += n
		}
	}
	return time.Duration(ns)
}
