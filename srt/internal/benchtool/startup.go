//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"
)

// startup compares `srt -c true` (default settings) with bare bubblewrap
// running `true` with every namespace unshared, interleaving the runs so
// that machine noise hits both alike.
func startup(srt string, runs int) error {
	bare, sandboxed, env, done, err := startupCommands(srt)
	if err != nil {
		return err
	}
	defer done()
	// Warm up both (page cache, srt's bubblewrap version cache).
	for i := 0; i < 3; i++ {
		if _, _, err := timeRun(bare, env); err != nil {
			return fmt.Errorf("bare bwrap: %w", err)
		}
		if _, _, err := timeRun(sandboxed, env); err != nil {
			return fmt.Errorf("srt: %w", err)
		}
	}
	var tb, ts []time.Duration
	var peak int64
	for i := 0; i < runs; i++ {
		d, _, err := timeRun(bare, env)
		if err != nil {
			return err
		}
		tb = append(tb, d)
		d, rss, err := timeRun(sandboxed, env)
		if err != nil {
			return err
		}
		ts = append(ts, d)
		peak = max(peak, rss)
	}
	mb, ms := median(tb), median(ts)
	fmt.Printf("startup: runs=%d\n", runs)
	fmt.Printf("  bare bwrap true   median %8.2f ms  (min %.2f, max %.2f)\n", ms2(mb), ms2(minD(tb)), ms2(maxD(tb)))
	fmt.Printf("  srt -c true       median %8.2f ms  (min %.2f, max %.2f)\n", ms2(ms), ms2(minD(ts)), ms2(maxD(ts)))
	fmt.Printf("  ratio srt/bwrap   %.2f   (target <= 2.0)\n", float64(ms)/float64(mb))
	fmt.Printf("  peak RSS          %.1f MiB (largest process of srt's tree; target <= 25 MiB)\n", float64(peak)/1024)
	return nil
}

// startupCommands are the startup's two commands, bare bubblewrap's and
// srt's, and their environment, whose HOME is an empty directory (no
// settings file: srt's built-in defaults) that done removes.
func startupCommands(srt string) (bare, sandboxed, env []string, done func(), err error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	home, err := os.MkdirTemp("", "srt-bench-home-")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	bare = []string{bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--new-session", "--die-with-parent", "true"}
	sandboxed = []string{srt, "-c", "true"}
	env = append(os.Environ(), "HOME="+home)
	return bare, sandboxed, env, func() { os.RemoveAll(home) }, nil
}

// timeRun runs argv and returns its wall time and the peak RSS (KiB) of the
// largest process in its tree (wait4's ru_maxrss).
func timeRun(argv []string, env []string) (time.Duration, int64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %w", argv, err)
	}
	d := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return d, ru.Maxrss, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func minD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxD(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
