//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/srt-sandbox/srt/internal/proctab"
)

// netOptions are the sizes of the network and capture parts.
type netOptions struct {
	sizeMiB  int           // download size
	rounds   int           // interleaved repetitions of the downloads and of the request runs
	requests int           // keep-alive requests per run
	tunnels  int           // idle CONNECT tunnels held at once
	inflight int           // decider requests in flight
	verdict  time.Duration // each verdict measurement

	conns       int // capture: new connections timed per run
	dnsInflight int // capture: DNS queries in flight
}

// netBench holds what every measurement of the network part shares.
type netBench struct {
	srt, decider string
	dir          string // temporary: the client, the settings, srt's HOME
	client       string
	settings     string
	env          []string // srt's and curl's environment: no proxy variables
	web          *httpServer
	echo         *echoServer
	relay        *relay // capture's minimal relay, while it runs
}

// network measures srt's egress path against the same work done directly
// on the host, in one run (scripts/bench network):
//
//	(a) a download by curl on the host, (b) the same from inside the
//	sandbox through an HTTP CONNECT tunnel, (c) through SOCKS5;
//	(d) keep-alive plain-HTTP requests through the proxy vs directly;
//	(e) srt-proxy's RSS holding idle CONNECT tunnels;
//	(f) the reference decider's verdicts per second.
func network(srt string, o netOptions) error {
	b, err := newNetBench(srt, o.sizeMiB)
	if err != nil {
		return err
	}
	defer b.close()
	fmt.Printf("network: download %d MiB x%d, %d keep-alive requests x%d, %d idle tunnels, %d verdicts in flight\n",
		o.sizeMiB, o.rounds, o.requests, o.rounds, o.tunnels, o.inflight)
	if err := b.downloads(o); err != nil {
		return err
	}
	if err := b.requests(o); err != nil {
		return err
	}
	if err := b.idleTunnels(o); err != nil {
		return err
	}
	return b.verdicts(o)
}

// newNetBench builds the client and starts the servers of the network and
// capture parts, with settings that allow both servers' ports; close
// undoes it.
func newNetBench(srt string, sizeMiB int) (_ *netBench, err error) {
	if _, err := exec.LookPath("curl"); err != nil {
		return nil, errors.New("curl is needed for the network and capture parts")
	}
	if srt, err = exec.LookPath(srt); err != nil {
		return nil, err
	}
	if srt, err = filepath.Abs(srt); err != nil {
		return nil, err
	}
	b := &netBench{srt: srt, decider: filepath.Join(filepath.Dir(srt), "decider")}
	if _, err := os.Stat(b.decider); err != nil {
		return nil, fmt.Errorf("the decider beside srt: %w", err)
	}
	if b.dir, err = os.MkdirTemp("", "srt-bench-net-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if err := os.Chmod(b.dir, 0o755); err != nil { // the sandbox runs the client from here
		return nil, err
	}
	b.client = filepath.Join(b.dir, "netclient")
	build := exec.Command("go", "build", "-trimpath", "-o", b.client, "github.com/srt-sandbox/srt/internal/benchtool/netclient")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the client (run benchtool inside the srt workspace): %w", err)
	}
	home := filepath.Join(b.dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, err
	}
	b.env = append(noProxyEnv(), "HOME="+home)

	if b.web, err = startHTTPServer(int64(sizeMiB) << 20); err != nil {
		return nil, err
	}
	if b.echo, err = startEchoServer(); err != nil {
		return nil, err
	}
	settings := map[string]any{
		"network": map[string]any{
			"allowedDomains": []string{fmt.Sprintf("127.0.0.1:%d", b.web.port()), fmt.Sprintf("127.0.0.1:%d", b.echo.port())},
			"deniedDomains":  []string{},
		},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	}
	js, _ := json.Marshal(settings)
	b.settings = filepath.Join(b.dir, "settings.json")
	if err := os.WriteFile(b.settings, js, 0o644); err != nil {
		return nil, err
	}
	return b, nil
}

// close stops the servers and removes the temporary directory.
func (b *netBench) close() {
	if b.web != nil {
		b.web.close()
	}
	if b.echo != nil {
		b.echo.close()
	}
	os.RemoveAll(b.dir)
}

// noProxyEnv is benchtool's environment without proxy variables: srt
// would hand them to srt-proxy as its parent proxy, and the host's curl
// would use them.
func noProxyEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "no_proxy", "home":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// line prints one result: the measured value, the baseline, their ratio and
// the target, and whether the target is met.
func line(label, value, baseline string, ratio float64, target string, met *bool) {
	verdict := ""
	if met != nil {
		verdict = "  met"
		if !*met {
			verdict = "  MISSED"
		}
	}
	fmt.Printf("  %-32s %-30s baseline %-32s ratio %5.2f  target %s%s\n", label, value, baseline, ratio, target, verdict)
}

func ptr(b bool) *bool { return &b }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

// sandboxed runs a shell command under srt with the bench settings and
// returns its standard output.
func (b *netBench) sandboxed(command string) ([]byte, error) {
	cmd := exec.Command(b.srt, "-s", b.settings, "-c", command)
	cmd.Env = b.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("srt -c %s: %w\n%s", command, err, stderr.Bytes())
	}
	return out, nil
}

// downloads is (a), (b) and (c), interleaved.
func (b *netBench) downloads(o netOptions) error {
	speeds, err := b.downloadSpeeds(o, []curlRun{
		{"connect", `curl -sS --noproxy '' -p -x "$HTTPS_PROXY"`},
		{"socks", `curl -sS --noproxy '' -x "$FTP_PROXY"`},
	})
	if err != nil {
		return err
	}
	a := medianF(speeds["host"])
	mibs := func(v float64) string { return fmt.Sprintf("%.0f MiB/s", v) }
	detail := func(s []float64) string { return fmt.Sprintf("(min %.0f, max %.0f)", minF(s), maxF(s)) }
	fmt.Printf("  (a) host curl, direct: median %s %s\n", mibs(a), detail(speeds["host"]))
	for _, k := range []struct{ key, label string }{{"connect", "(b) download, CONNECT tunnel"}, {"socks", "(c) download, SOCKS5"}} {
		v := medianF(speeds[k.key])
		ratio := v / a
		line(k.label, mibs(v)+" "+detail(speeds[k.key]), mibs(a)+" host curl (a)", ratio, ">= 0.70", ptr(ratio >= 0.7))
	}
	return nil
}

// curlRun is one download from inside the sandbox: its name and the curl
// command (with its options) that makes it.
type curlRun struct{ name, curl string }

// downloadSpeeds makes the /blob download with curl on the host ("host")
// and with each of inside in the sandbox (or, named "relay", with curl on
// the host through b.relay), in o.rounds interleaved rounds,
// and returns their speeds in MiB/s by name.
func (b *netBench) downloadSpeeds(o netOptions, inside []curlRun) (map[string][]float64, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d/blob", b.web.port())
	warm := fmt.Sprintf("http://127.0.0.1:%d/small", b.web.port())
	const format = "%{http_code} %{size_download} %{speed_download}"
	run := func(r curlRun) ([]byte, error) {
		if r.name == "host" || r.name == "relay" {
			u := url
			if r.name == "relay" {
				u = fmt.Sprintf("http://127.0.0.1:%d/blob", b.relay.port())
			}
			cmd := exec.Command("curl", "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", format, u)
			cmd.Env = b.env
			cmd.Stderr = os.Stderr
			return cmd.Output()
		}
		// The first connection out of a sandbox waits for srt to start
		// the egress processes; a small request first keeps that out of
		// the speed.
		return b.sandboxed(fmt.Sprintf(`%s -o /dev/null %s && %s -o /dev/null -w %s %s`, r.curl, warm, r.curl, quote(format), url))
	}
	speeds := map[string][]float64{}
	want := int64(o.sizeMiB) << 20
	all := append([]curlRun{{name: "host"}}, inside...)
	for r := 0; r < o.rounds; r++ {
		for k := range all {
			c := all[(k+r)%len(all)] // each round in another order, as inTurn
			out, err := run(c)
			if err != nil {
				return nil, fmt.Errorf("download (%s): %w", c.name, err)
			}
			var code string
			var size int64
			var speed float64
			if _, err := fmt.Sscan(string(out), &code, &size, &speed); err != nil || code != "200" || size != want {
				return nil, fmt.Errorf("download (%s): curl reported %q", c.name, out)
			}
			speeds[c.name] = append(speeds[c.name], speed/(1<<20))
		}
	}
	return speeds, nil
}

// inTurn runs each of runs once per round, for rounds rounds, each round
// starting one further along, so that no run always follows the same one:
// a run pays for some of the one before it (the kernel tears a sandbox's
// network namespace down after its last process exits).
func inTurn(rounds int, runs ...func() error) error {
	for r := 0; r < rounds; r++ {
		for k := range runs {
			if err := runs[(k+r)%len(runs)](); err != nil {
				return err
			}
		}
	}
	return nil
}

// clientLine is the shell command that runs the bench client with args
// inside the sandbox.
func (b *netBench) clientLine(args ...string) string {
	words := []string{quote(b.client)}
	for _, a := range args {
		words = append(words, quote(a))
	}
	return strings.Join(words, " ")
}

// onHost runs the bench client with args on the host and returns its
// standard output.
func (b *netBench) onHost(args ...string) ([]byte, error) {
	cmd := exec.Command(b.client, args...)
	cmd.Env = b.env
	cmd.Stderr = os.Stderr
	return cmd.Output()
}

// collect decodes the client's JSON line out (from a run that returned
// err) and adds it to into[what].
func collect[T any](into map[string][]T, what string, out []byte, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var v T
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("%s: %q: %w", what, out, err)
	}
	into[what] = append(into[what], v)
	return nil
}

// medianOf is the median of f over rs.
func medianOf[T any](rs []T, f func(T) float64) float64 {
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	return medianF(v)
}

type getResult struct {
	N        int     `json:"n"`
	MeanUS   float64 `json:"mean_us"`
	MedianUS float64 `json:"median_us"`
	P90US    float64 `json:"p90_us"`
	P99US    float64 `json:"p99_us"`
	MinUS    float64 `json:"min_us"`
}

// requests is (d): keep-alive plain-HTTP requests through srt's HTTP proxy
// against the same requests made directly on the host. Two diagnostics go
// with it: the same requests inside one CONNECT tunnel (the relay without a
// verdict per request), and the CPU time srt-proxy and the decider spend
// per proxied request.
func (b *netBench) requests(o netOptions) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/small", b.web.port())
	const warmup = 50
	args := []string{"get", "-url", url, "-n", strconv.Itoa(o.requests), "-warmup", strconv.Itoa(warmup)}
	inside := b.clientLine(args...)
	rs := map[string][]getResult{}
	var upstream []int64
	var proxyCPU, deciderCPU []float64 // µs per timed request
	for r := 0; r < o.rounds; r++ {
		out, err := b.onHost(args...)
		if err := collect(rs, "requests (host)", out, err); err != nil {
			return err
		}

		before := b.web.conns.Load()
		var p0, d0 int64
		err = b.sandboxedHold(inside+" -proxy-env HTTP_PROXY -hold", func(srtPID int, l string) error {
			proxy, err1 := childNamed(srtPID, "srt-proxy")
			decider, err2 := childNamed(srtPID, "decider")
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			p, d := cpuNS(proxy), cpuNS(decider)
			if l == "warm" {
				p0, d0 = p, d
				return nil
			}
			proxyCPU = append(proxyCPU, float64(p-p0)/1000/float64(o.requests))
			deciderCPU = append(deciderCPU, float64(d-d0)/1000/float64(o.requests))
			return collect(rs, "requests (proxy)", []byte(l), nil)
		})
		if err != nil {
			return fmt.Errorf("requests (proxy): %w", err)
		}
		upstream = append(upstream, b.web.conns.Load()-before)

		out, err = b.sandboxed(inside + " -proxy-env HTTPS_PROXY -connect")
		if err := collect(rs, "requests (tunnel)", out, err); err != nil {
			return err
		}
	}
	host, proxied, tunneled := rs["requests (host)"], rs["requests (proxy)"], rs["requests (tunnel)"]
	med := medianOf[getResult]
	median := func(g getResult) float64 { return g.MedianUS }
	mean := func(g getResult) float64 { return g.MeanUS }
	hMed, pMed, tMed := med(host, median), med(proxied, median), med(tunneled, median)
	hMean, pMean := med(host, mean), med(proxied, mean)
	added := (pMed - hMed) / 1000
	line("(d) added latency per request", fmt.Sprintf("%.3f ms", added),
		fmt.Sprintf("%.1f µs/req direct, %.1f proxied", hMed, pMed), pMed/hMed, "added <= 0.300 ms", ptr(added <= 0.3))
	fmt.Printf("      medians of %d runs' per-request medians; means: direct %.1f µs, proxied %.1f µs (added %.3f ms); proxied p99 %.1f µs\n",
		o.rounds, hMean, pMean, (pMean-hMean)/1000, med(proxied, func(g getResult) float64 { return g.P99US }))
	fmt.Printf("      same requests in one CONNECT tunnel (no verdict per request): %.1f µs/req, added %.3f ms\n", tMed, (tMed-hMed)/1000)
	fmt.Printf("      CPU per proxied request: srt-proxy %.1f µs, decider %.1f µs; upstream connections per run of %d requests: %v\n",
		medianF(proxyCPU), medianF(deciderCPU), o.requests+warmup, upstream)
	return nil
}

// sandboxedHold runs a command that prints lines and waits for a line on
// its standard input after each: onLine sees every line (with srt's pid)
// before the command is let go on.
func (b *netBench) sandboxedHold(command string, onLine func(srtPID int, line string) error) error {
	cmd := exec.Command(b.srt, "-s", b.settings, "-c", command)
	cmd.Env = b.env
	var stderr bytes.Buffer // shown only on a failure
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if err := onLine(cmd.Process.Pid, sc.Text()); err != nil {
			stdin.Close()
			cmd.Process.Kill()
			cmd.Wait()
			return fmt.Errorf("%w\n%s", err, stderr.Bytes())
		}
		if _, err := stdin.Write([]byte("\n")); err != nil {
			break
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("srt -c %s: %w\n%s", command, err, stderr.Bytes())
	}
	return nil
}

// idleTunnels is (e): srt-proxy's RSS while the client holds o.tunnels idle
// CONNECT tunnels to the echo server; the baseline is its RSS with one.
func (b *netBench) idleTunnels(o netOptions) error {
	command := fmt.Sprintf("%s tunnels -target 127.0.0.1:%d -stages 1,%d -proxy-env HTTPS_PROXY", quote(b.client), b.echo.port(), o.tunnels)
	var stats []procStat
	err := b.sandboxedHold(command, func(srtPID int, l string) error {
		if want := []int{1, o.tunnels}[min(len(stats), 1)]; l != fmt.Sprintf("ready %d", want) {
			return fmt.Errorf("client said %q", l)
		}
		time.Sleep(500 * time.Millisecond) // let the proxy settle
		pid, err := childNamed(srtPID, "srt-proxy")
		if err != nil {
			return err
		}
		st, err := readProcStat(pid)
		if err != nil {
			return err
		}
		st.echoOpen = b.echo.open()
		stats = append(stats, st)
		return nil
	})
	if err != nil {
		return fmt.Errorf("tunnels: %w", err)
	}
	if len(stats) != 2 {
		return fmt.Errorf("tunnels: the client stopped after %d stages", len(stats))
	}
	one, all := stats[0], stats[1]
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	line(fmt.Sprintf("(e) srt-proxy RSS, %d tunnels", o.tunnels), fmt.Sprintf("%.1f MiB", mib(all.rssKiB)),
		fmt.Sprintf("%.1f MiB with 1 tunnel", mib(one.rssKiB)), float64(all.rssKiB)/float64(one.rssKiB), "<= 100 MiB", ptr(mib(all.rssKiB) <= 100))
	fmt.Printf("      %.1f KiB per tunnel; peak (VmHWM) %.1f MiB; %d descriptors (%d with 1 tunnel), %d threads; echo server held %d connections\n",
		float64(all.rssKiB-one.rssKiB)/float64(o.tunnels-1), mib(all.hwmKiB), all.fds, one.fds, all.threads, all.echoOpen)
	return nil
}

// cpuNS is the CPU time (ns) the threads of pid have run, from schedstat;
// 0 when it cannot be read.
func cpuNS(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			sum += n
		}
	}
	return sum
}

type procStat struct {
	rssKiB, hwmKiB int64
	threads, fds   int
	echoOpen       int
}

// childNamed finds the child of parent whose command name is name.
func childNamed(parent int, name string) (int, error) {
	for _, p := range proctab.Children(parent) {
		if p.Comm == name {
			return p.PID, nil
		}
	}
	return 0, fmt.Errorf("no %s process under srt (pid %d)", name, parent)
}

func readProcStat(pid int) (procStat, error) {
	var st procStat
	f, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, l := range strings.Split(string(f), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			st.rssKiB = n
		case "VmHWM":
			st.hwmKiB = n
		case "Threads":
			st.threads = int(n)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err == nil {
		st.fds = len(fds)
	}
	return st, nil
}

// verdicts is (f): the reference decider's verdicts per second, against a
// responder that decodes and allows without any policy.
func (b *netBench) verdicts(o netOptions) error {
	const rounds = 3
	var dec, base, single []float64
	for r := 0; r < rounds; r++ {
		v, err := verdictRate(b.decider, o.inflight, o.verdict)
		if err != nil {
			return fmt.Errorf("verdicts (decider): %w", err)
		}
		dec = append(dec, v)
		if v, err = verdictRate(b.decider, 1, o.verdict); err != nil {
			return fmt.Errorf("verdicts (decider, 1 in flight): %w", err)
		}
		single = append(single, v)
		if v, err = verdictRate("", o.inflight, o.verdict); err != nil {
			return fmt.Errorf("verdicts (baseline): %w", err)
		}
		base = append(base, v)
	}
	d, bl := medianF(dec), medianF(base)
	line("(f) decider verdicts/s", fmt.Sprintf("%.0f /s", d), fmt.Sprintf("%.0f /s codec-only responder", bl), d/bl, "none set", nil)
	fmt.Printf("      %d in flight, medians of %d runs of %v: decider (min %.0f, max %.0f); one at a time: %.0f /s, a round trip of %.1f µs\n",
		o.inflight, rounds, o.verdict, minF(dec), maxF(dec), medianF(single), 1e6/medianF(single))
	return nil
}

func medianF(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

func minF(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxF(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
