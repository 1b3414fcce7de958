//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// What srt says on every run without capture (srt/sandbox/capture.go):
// the phrase every capture-off warning has, and the one it adds when the
// kernel refused the rules.
const (
	warnCaptureOff = "programs that ignore the proxy settings get no network"
	warnRefused    = "the capture rules could not be installed"
)

// captureStartup is (d): `srt -c true` (default settings, so capture is
// on) against bare bubblewrap as the startup part runs it, and against
// the same srt with capture off, runs interleaved. Capture is turned off
// the way a kernel without nf_tables has it: srt runs from a thread whose
// seccomp filter refuses NETLINK_NETFILTER sockets (refusingThread), and
// must say that the capture rules could not be installed; the capture-on
// runs go through the same filter refusing an unused protocol.
func captureStartup(srt string, runs int) error {
	bare, sandboxed, env, done, err := startupCommands(srt)
	if err != nil {
		return err
	}
	defer done()
	stderr, err := os.CreateTemp("", "srt-bench-stderr-")
	if err != nil {
		return err
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()

	// timed runs argv (from thread t when it is set) and returns its wall
	// time and what it wrote on its standard error.
	timed := func(t *refusingThread, argv []string) (d time.Duration, said string, err error) {
		run := func() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = env
			cmd.Stderr = stderr // a file: no copying goroutine to wait for
			if err = stderr.Truncate(0); err != nil {
				return
			}
			start := time.Now()
			err = cmd.Run()
			d = time.Since(start)
		}
		if t != nil {
			t.do(run)
		} else {
			run()
		}
		b, rerr := os.ReadFile(stderr.Name())
		if err == nil {
			err = rerr
		}
		if err != nil {
			err = fmt.Errorf("%v: %w\n%s", argv, err, b)
		}
		return d, string(b), err
	}

	on, err := newRefusingThread(netlinkUnused)
	if err != nil {
		return fmt.Errorf("a seccomp filter for srt's runs: %w", err)
	}
	defer on.close()
	if _, said, err := timed(on, sandboxed); err != nil {
		return err
	} else if strings.Contains(said, warnCaptureOff) {
		return fmt.Errorf("capture is off on this machine, so there is nothing to measure: srt said %q", strings.TrimSpace(said))
	}
	off, err := newRefusingThread(unix.NETLINK_NETFILTER)
	var offWhy string
	if err != nil {
		offWhy = fmt.Sprintf("a seccomp filter refusing nftables: %v", err)
	} else {
		defer func() {
			if off != nil {
				off.close()
			}
		}()
		_, said, err := timed(off, sandboxed)
		if err != nil {
			return fmt.Errorf("srt with nftables refused: %w", err)
		}
		if !strings.Contains(said, warnRefused) {
			offWhy = fmt.Sprintf("srt did not warn that %s with NETLINK_NETFILTER sockets refused (it said %q): capture could not be turned off this way (does srt install its rules another way now?)", warnRefused, strings.TrimSpace(said))
			off.close()
			off = nil
		}
	}

	// Warm up all (page cache, srt's bubblewrap version cache), then
	// measure, interleaved, in an order that turns each round (as
	// inTurn): in a fixed order (bare, srt, srt) the second srt measured
	// up to 7 % slower than the first, the same command (2-core test
	// machine, runs of 100).
	type variant struct {
		name  string
		t     *refusingThread
		argv  []string
		check func(said string) error
		times []time.Duration
	}
	vs := []*variant{
		{name: "bare bwrap", argv: bare, check: func(string) error { return nil }},
		{name: "srt, capture on", t: on, argv: sandboxed, check: func(said string) error {
			if strings.Contains(said, warnCaptureOff) {
				return fmt.Errorf("srt turned capture off during the run: %q", strings.TrimSpace(said))
			}
			return nil
		}},
	}
	if off != nil {
		vs = append(vs, &variant{name: "srt, capture off", t: off, argv: sandboxed, check: func(said string) error {
			if !strings.Contains(said, warnRefused) {
				return fmt.Errorf("srt with nftables refused stopped warning that %s: %q", warnRefused, strings.TrimSpace(said))
			}
			return nil
		}})
	}
	for i := -3; i < runs; i++ {
		for k := range vs {
			v := vs[(k+i+3)%len(vs)]
			d, said, err := timed(v.t, v.argv)
			if err == nil {
				err = v.check(said)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if i >= 0 {
				v.times = append(v.times, d)
			}
		}
	}
	tb, ton := vs[0].times, vs[1].times
	var toff []time.Duration
	if off != nil {
		toff = vs[2].times
	}
	detail := func(ds []time.Duration) string {
		return fmt.Sprintf("median %6.2f ms (min %.2f, max %.2f)", ms2(median(ds)), ms2(minD(ds)), ms2(maxD(ds)))
	}
	mb, mon := median(tb), median(ton)
	if off != nil {
		moff := median(toff)
		ratio := float64(mon) / float64(moff)
		line("(d) startup, capture on/off", fmt.Sprintf("%.2f / %.2f ms", ms2(mon), ms2(moff)),
			"srt -c true, rules refused", ratio, "<= 1.10", ptr(ratio <= 1.1))
	} else {
		fmt.Printf("  (d) startup, capture on/off      NOT MEASURED: %s\n", offWhy)
	}
	fmt.Printf("      bare bwrap true          %s\n", detail(tb))
	fmt.Printf("      srt -c true, capture on  %s  ratio to bare bwrap %.2f\n", detail(ton), float64(mon)/float64(mb))
	if off != nil {
		fmt.Printf("      srt -c true, capture off %s  ratio to bare bwrap %.2f (nftables refused; srt warned that %s)\n",
			detail(toff), float64(median(toff))/float64(mb), warnRefused)
	}
	return nil
}
