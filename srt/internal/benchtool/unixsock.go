//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// connectLoop, run inside the sandbox by python3: n loopback TCP connects
// (and sends) to a listener of its own, then n Unix connects to a socket
// of its own, and the microseconds each loop took per iteration.
const connectLoop = `
import socket, sys, time
n = int(sys.argv[1])
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(n + 8)
a = l.getsockname()
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(); c.connect(a); c.send(b"x"); c.close(); l.accept()[0].close()
tcp = (time.perf_counter() - t) / n * 1e6
u = socket.socket(socket.AF_UNIX); u.bind("bench.sock"); u.listen(n + 8)
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(socket.AF_UNIX); c.connect("bench.sock"); c.close(); u.accept()[0].close()
print("%.1f %.1f" % (tcp, (time.perf_counter() - t) / n * 1e6))
`

// unixsock measures what the supervision of network.allowUnixSockets adds
// to a connect: the same loop under allowAllUnixSockets (no supervisor)
// and under an allowUnixSockets list (every connect and addressed send
// goes through the init stage), interleaved.
func unixsock(srt string, runs, n int) error {
	dir, err := os.MkdirTemp("", "srt-bench-unix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	settings := func(name, extra string) (string, error) {
		p := filepath.Join(dir, name)
		s := `{"network":{"allowedDomains":[],"deniedDomains":[]` + extra + `},"filesystem":{"denyRead":[],"allowWrite":["` + dir + `"],"denyWrite":[]}}`
		return p, os.WriteFile(p, []byte(s), 0o644)
	}
	all, err := settings("all.json", `,"allowAllUnixSockets":true`)
	if err != nil {
		return err
	}
	listed, err := settings("listed.json", `,"allowUnixSockets":["/run/srt-bench-none.sock"]`)
	if err != nil {
		return err
	}
	measure := func(s string) (tcp, unixc float64, err error) {
		os.Remove(filepath.Join(dir, "bench.sock"))
		cmd := exec.Command(srt, "-s", s, "--", "python3", "-c", connectLoop, strconv.Itoa(n))
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return 0, 0, fmt.Errorf("srt: %w", err)
		}
		f := strings.Fields(string(out))
		if len(f) != 2 {
			return 0, 0, fmt.Errorf("unexpected output %q", out)
		}
		tcp, _ = strconv.ParseFloat(f[0], 64)
		unixc, _ = strconv.ParseFloat(f[1], 64)
		return tcp, unixc, nil
	}
	var t0, t1, u0, u1 []float64
	for i := 0; i < runs; i++ {
		a, b, err := measure(all)
		if err != nil {
			return err
		}
		c, d, err := measure(listed)
		if err != nil {
			return err
		}
		t0, u0, t1, u1 = append(t0, a), append(u0, b), append(t1, c), append(u1, d)
	}
	fmt.Printf("unixsock: runs=%d connects=%d (python3, loopback inside the sandbox)\n", runs, n)
	fmt.Printf("  TCP connect+send   %7.1f µs unsupervised, %7.1f µs supervised (+%.1f µs)\n", medianF(t0), medianF(t1), medianF(t1)-medianF(t0))
	fmt.Printf("  Unix connect       %7.1f µs unsupervised, %7.1f µs supervised (+%.1f µs)\n", medianF(u0), medianF(u1), medianF(u1)-medianF(u0))
	return nil
}
