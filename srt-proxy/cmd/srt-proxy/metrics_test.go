//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetrics: with --metrics-listen, real traffic through the proxy
// (plain HTTP let through, refused at the gate, denied by the decider, to
// an upstream that refuses the connection; HTTPS terminated) shows in the
// Prometheus text format a real HTTP client scrapes; every metric on the
// page is documented in docs/srt-proxy.md.
func TestMetrics(t *testing.T) {
	p, curl, caFile := startTerminating(t, "--metrics-listen", "127.0.0.1:0")
	url, ok := strings.CutPrefix(p.line(), "srt proxy: serving metrics on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/metrics") {
		t.Fatalf("metrics line %q", url)
	}

	up := newUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	closed := closedAddr(t)
	exchange := func(raw string, verdicts ...string) string {
		got := async(func() string { return p.roundTrip(raw) })
		for _, v := range verdicts {
			id, _ := p.dec.nextReq()
			p.dec.send(verdict(id, v))
		}
		return await(t, got)
	}
	allow := `"action":"allow"`
	if got := exchange("GET http://"+up.addr+"/ HTTP/1.1\r\nHost: "+up.addr+"\r\n\r\n", allow); !strings.HasSuffix(got, "\r\n\r\nok") {
		t.Fatalf("GET: %q", got)
	}
	if got := exchange("POST http://"+up.addr+"/ HTTP/1.1\r\nHost: "+up.addr+"\r\nContent-Length: 5\r\n\r\nhello", allow); !strings.HasSuffix(got, "\r\n\r\nok") {
		t.Fatalf("POST: %q", got)
	}
	exchange("GET http://notallowed.test/ HTTP/1.1\r\nHost: notallowed.test\r\n\r\n")
	exchange("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", `"action":"deny","status":403,"reason":"no"`)
	exchange("GET http://"+closed+"/ HTTP/1.1\r\nHost: "+closed+"\r\n\r\n", allow)
	out := async(func() string {
		b, _ := exec.Command(curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--cacert", caFile, "-x", "http://"+p.addr, "https://allowed.test/").CombinedOutput()
		return string(b)
	})
	id, _ := p.dec.nextReq()
	p.dec.send(verdict(id, `"action":"deny","status":451,"reason":"not here"`))
	if got := await(t, out); got != "451" {
		t.Fatalf("HTTPS: %q", got)
	}

	want := map[string]float64{
		"srt_proxy_connections_total": 6,
		`srt_proxy_decisions_total{kind="http",outcome="allow",reason="allowed"}`:                    2,
		`srt_proxy_decisions_total{kind="http",outcome="deny",reason="host_not_allowed"}`:            1,
		`srt_proxy_decisions_total{kind="http",outcome="deny",reason="decider"}`:                     1,
		`srt_proxy_decisions_total{kind="http",outcome="fail",reason="upstream_connection_refused"}`: 1,
		`srt_proxy_decisions_total{kind="connect",outcome="allow",reason="allowed"}`:                 1,
		`srt_proxy_decisions_total{kind="https",outcome="deny",reason="decider"}`:                    1,
		`srt_proxy_errors_total{kind="upstream_connection_refused"}`:                                 1,
		`srt_proxy_bytes_total{direction="up"}`:                                                      5,
		`srt_proxy_bytes_total{direction="down"}`:                                                    4,
		`srt_proxy_decider_latency_seconds_count{verdict="allow"}`:                                   3,
		`srt_proxy_decider_latency_seconds_count{verdict="deny"}`:                                    2,
		`srt_proxy_decider_latency_seconds_bucket{verdict="deny",le="+Inf"}`:                         2,
		"srt_proxy_connections_open":                                                                 0,
		`srt_proxy_tunnels_open{kind="terminated"}`:                                                  0,
	}
	// The proxy notices the clients' closes as they come: until then a
	// connection is open. Scrape until it has (bounded).
	var page string
	var got map[string]float64
	for deadline := time.Now().Add(10 * time.Second); ; {
		page, got = scrape(t, url)
		if got["srt_proxy_connections_open"] == 0 && got["srt_proxy_decisions_total{kind=\"connect\",outcome=\"allow\",reason=\"allowed\"}"] == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for series, v := range want {
		if g, ok := got[series]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", series, g, ok, v)
		}
	}
	if got["process_open_fds"] <= 0 {
		t.Error("no process_open_fds")
	}
	docs, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "srt-proxy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(page, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && !strings.Contains(string(docs), "`"+f[2]+"`") {
			t.Errorf("metric %s is not in docs/srt-proxy.md", f[2])
		}
	}
	if resp, err := http.Get(strings.TrimSuffix(url, "/metrics") + "/other"); err != nil || resp.StatusCode != 404 {
		t.Errorf("another path: %v %v", resp, err)
	}
}

// scrape GETs the metrics page with a real HTTP client: the page, and
// each sample's value by its series (name and labels as printed).
func scrape(t *testing.T, url string) (string, map[string]float64) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("scrape: %s, Content-Type %q", resp.Status, ct)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return string(b), samples
}

// TestMetricsAddressInUse: a metrics address that cannot be bound stops
// srt-proxy at the start, naming the option.
func TestMetricsAddressInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := startNoHello(t, startOpts{args: []string{"--metrics-listen", l.Addr().String()}})
	p.dec.next()
	p.dec.send(defaultHello)
	p.expectStop("start failed: --metrics-listen: listen tcp4 "+l.Addr().String()+": bind: address already in use", 1)
}
