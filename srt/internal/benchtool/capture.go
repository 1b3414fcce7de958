//go:build linux

package main

import (
	"fmt"
	"strconv"
)

// capture measures srt's transparent capture (scripts/bench capture)
// against the same work done directly on the host, in one run:
//
//	(a) a download by curl that ignores the proxy variables, captured,
//	    against the same download on the host;
//	(b) the added time to open a captured connection;
//	(c) the sandbox's name server: answers per second and latency;
//	(d) `srt -c true` with capture on, against bare bubblewrap and
//	    against srt with capture off.
func capture(srt string, o netOptions, runs int) error {
	b, err := newNetBench(srt, o.sizeMiB)
	if err != nil {
		return err
	}
	defer b.close()
	fmt.Printf("capture: download %d MiB x%d, %d connections x%d, DNS %d in flight x%d, startup runs=%d\n",
		o.sizeMiB, o.rounds, o.conns, o.rounds, o.dnsInflight, o.rounds, runs)
	if err := b.capturedDownloads(o); err != nil {
		return err
	}
	if err := b.connTimes(o); err != nil {
		return err
	}
	if err := b.dnsRates(o); err != nil {
		return err
	}
	return captureStartup(b.srt, runs)
}

// capturedDownloads is (a): curl --noproxy '*' inside the sandbox, whose
// connection to the allowed 127.0.0.1:port is captured, against the same
// curl on the host; the CONNECT tunnel's download of the network part
// goes with them for comparison. The rounds are interleaved.
func (b *netBench) capturedDownloads(o netOptions) error {
	rl, err := startRelay(fmt.Sprintf("127.0.0.1:%d", b.web.port()))
	if err != nil {
		return err
	}
	defer rl.close()
	b.relay = rl
	speeds, err := b.downloadSpeeds(o, []curlRun{
		{"captured", `curl -sS --noproxy '*'`},
		{"connect", `curl -sS --noproxy '' -p -x "$HTTPS_PROXY"`},
		{name: "relay"},
	})
	if err != nil {
		return err
	}
	host, captured, tunnel, relayed := medianF(speeds["host"]), medianF(speeds["captured"]), medianF(speeds["connect"]), medianF(speeds["relay"])
	mibs := func(v float64, s []float64) string {
		return fmt.Sprintf("%.0f MiB/s (min %.0f, max %.0f)", v, minF(s), maxF(s))
	}
	ratio := captured / host
	line("(a) download, captured", mibs(captured, speeds["captured"]), fmt.Sprintf("%.0f MiB/s host curl", host), ratio, ">= 0.80", ptr(ratio >= 0.8))
	fmt.Printf("      host curl %s; through a CONNECT tunnel %s, captured/CONNECT %.2f\n",
		mibs(host, speeds["host"]), mibs(tunnel, speeds["connect"]), captured/tunnel)
	fmt.Printf("      host curl through a minimal splicing relay on the host (no sandbox, no policy) %s: relay/host %.2f, captured/relay %.2f\n",
		mibs(relayed, speeds["relay"]), relayed/host, captured/relayed)
	return nil
}

// connTimes is (b): o.conns new connections one after the other to the
// echo server (one byte each way), captured inside the sandbox, against
// the same on the host; CONNECT tunnels to it for comparison.
func (b *netBench) connTimes(o netOptions) error {
	args := []string{"conns", "-target", fmt.Sprintf("127.0.0.1:%d", b.echo.port()), "-n", strconv.Itoa(o.conns), "-warmup", "20"}
	inside := b.clientLine(args...)
	rs := map[string][]getResult{}
	err := inTurn(o.rounds, func() error {
		out, err := b.onHost(args...)
		return collect(rs, "connections (host)", out, err)
	}, func() error {
		out, err := b.sandboxed(inside)
		return collect(rs, "connections (captured)", out, err)
	}, func() error {
		out, err := b.sandboxed(inside + " -proxy-env HTTPS_PROXY")
		return collect(rs, "connections (CONNECT)", out, err)
	})
	if err != nil {
		return err
	}
	host, captured, tunnel := rs["connections (host)"], rs["connections (captured)"], rs["connections (CONNECT)"]
	median := func(g getResult) float64 { return g.MedianUS }
	h, c, t := medianOf(host, median), medianOf(captured, median), medianOf(tunnel, median)
	added := (c - h) / 1000
	line("(b) added time per connection", fmt.Sprintf("%.3f ms", added),
		fmt.Sprintf("%.1f µs direct, %.1f captured", h, c), c/h, "added <= 1.000 ms", ptr(added <= 1))
	fmt.Printf("      medians of %d runs' per-connection medians (dial to the echoed byte); captured p90 %.1f µs; a CONNECT tunnel instead: %.1f µs, added %.3f ms\n",
		o.rounds, medianOf(captured, func(g getResult) float64 { return g.P90US }), t, (t-h)/1000)
	return nil
}

// dnsResult is netclient dns's line.
type dnsResult struct {
	getResult
	Inflight int     `json:"inflight"`
	Answers  int     `json:"answers"`
	Lost     int     `json:"lost"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"rate"`
}

// dnsRates is (c): A queries over UDP to the sandbox's name server
// (127.0.0.53:53, srt-proxy's), one at a time and o.dnsInflight in flight,
// against the same client on the host asking benchtool's own minimal
// responder.
func (b *netBench) dnsRates(o netOptions) error {
	base, err := startDNSResponder()
	if err != nil {
		return err
	}
	defer base.close()
	args := func(server string) []string {
		return []string{"dns", "-server", server, "-n", "2000", "-warmup", "300", "-inflight", strconv.Itoa(o.dnsInflight), "-duration", "1s"}
	}
	inside := b.clientLine(args("127.0.0.53:53")...)
	rs := map[string][]dnsResult{}
	err = inTurn(o.rounds, func() error {
		out, err := b.onHost(args(base.addr())...)
		return collect(rs, "DNS (host)", out, err)
	}, func() error {
		out, err := b.sandboxed(inside)
		return collect(rs, "DNS (sandbox)", out, err)
	})
	if err != nil {
		return err
	}
	host, sandbox := rs["DNS (host)"], rs["DNS (sandbox)"]
	rate := func(d dnsResult) float64 { return d.Rate }
	latency := func(d dnsResult) float64 { return d.MedianUS }
	lost := func(d dnsResult) float64 { return float64(d.Lost) }
	sr, hr := medianOf(sandbox, rate), medianOf(host, rate)
	line(fmt.Sprintf("(c) DNS answers/s, %d in flight", o.dnsInflight), fmt.Sprintf("%.0f /s", sr),
		fmt.Sprintf("%.0f /s minimal responder", hr), sr/hr, "none set", nil)
	sl, hl := medianOf(sandbox, latency), medianOf(host, latency)
	line("    DNS latency, one at a time", fmt.Sprintf("%.1f µs median", sl),
		fmt.Sprintf("%.1f µs minimal responder", hl), sl/hl, "none set", nil)
	fmt.Printf("      medians of %d runs (2000 queries one at a time; %d in flight for 1 s); sandbox p99 %.1f µs; queries lost (200 ms): sandbox %.0f, responder %.0f per run\n",
		o.rounds, o.dnsInflight, medianOf(sandbox, func(d dnsResult) float64 { return d.P99US }), medianOf(sandbox, lost), medianOf(host, lost))
	return nil
}
