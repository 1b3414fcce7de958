//go:build linux

// Command benchtool measures srt against baselines taken in the same run and
// prints ratios (see scripts/bench and docs/benchmarks.md). It never asserts
// timings: it reports them.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	srt := flag.String("srt", "srt", "srt binary to measure")
	part := flag.String("part", "startup", "which part to run: startup, landlock, network, capture, unixsock or fsviol")
	runs := flag.Int("runs", 30, "startup, capture: runs per startup measurement")
	var net netOptions
	flag.IntVar(&net.sizeMiB, "download-mib", 256, "network, capture: download size in MiB")
	flag.IntVar(&net.rounds, "rounds", 5, "network, capture, fsviol: interleaved repetitions (of the downloads and of the request, connection and DNS runs; of the make runs)")
	flag.IntVar(&net.requests, "requests", 1000, "network: keep-alive requests per run")
	flag.IntVar(&net.tunnels, "tunnels", 1000, "network: idle CONNECT tunnels held at once (at least 2)")
	flag.IntVar(&net.inflight, "inflight", 32, "network: decider requests in flight")
	flag.DurationVar(&net.verdict, "verdict-time", time.Second, "network: length of each verdict-rate measurement")
	flag.IntVar(&net.conns, "conns", 500, "capture: new connections timed per run")
	flag.IntVar(&net.dnsInflight, "dns-inflight", 32, "capture: DNS queries in flight for the answer rate")
	fsTargets := flag.Int("targets", 500, "fsviol: make targets")
	fsHeaders := flag.Int("headers", 18, "fsviol: headers each target reads")
	flag.Parse()
	var err error
	switch *part {
	case "startup":
		err = startup(*srt, *runs)
	case "network":
		if net.sizeMiB < 1 || net.rounds < 1 || net.requests < 1 || net.tunnels < 2 || net.inflight < 1 || net.verdict <= 0 {
			err = fmt.Errorf("bad network options")
			break
		}
		err = network(*srt, net)
	case "landlock":
		err = landlock(*srt, *runs)
	case "unixsock":
		err = unixsock(*srt, 5, 2000)
	case "capture":
		if net.sizeMiB < 1 || net.rounds < 1 || net.conns < 1 || net.dnsInflight < 1 || *runs < 1 {
			err = fmt.Errorf("bad capture options")
			break
		}
		err = capture(*srt, net, *runs)
	case "fsviol":
		if net.rounds < 1 || *fsTargets < 1 || *fsHeaders < 0 {
			err = fmt.Errorf("bad fsviol options")
			break
		}
		err = fsviol(*srt, net.rounds, *fsTargets, *fsHeaders)
	default:
		err = fmt.Errorf("unknown part %q", *part)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtool: %v\n", err)
		os.Exit(1)
	}
}
