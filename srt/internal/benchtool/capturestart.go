package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// What srt says on every run without capture (srt/sandbox/capture.go):
// the warning when it finds no iptables-restore, and the phrase every
// capture-off warning has.
const (
	warnNoIptables = "iptables is not installed"
	warnCaptureOff = "programs that ignore the proxy settings get no network"
)

// captureStartup is (d): `srt -c true` (default settings, so capture is
// on) against bare bubblewrap as the startup part runs it, and against
// the same srt with capture off, runs interleaved. Capture is turned off
// the way a machine without the iptables package has it: srt runs in a
// mount namespace where iptables-restore and ip6tables-restore are
// /dev/null (maskedThread), and must say that iptables is not installed.
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

	// timed runs argv (from the masked thread when t is set) and returns
	// its wall time and what it wrote on its standard error.
	timed := func(t *maskedThread, argv []string) (d time.Duration, said string, err error) {
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

	masked, offWhy := newMaskedThread()
	defer func() {
		if masked != nil {
			masked.close()
		}
	}()
	if masked != nil {
		_, said, err := timed(masked, sandboxed)
		if err != nil {
			return fmt.Errorf("srt with iptables hidden: %w", err)
		}
		if !strings.Contains(said, warnNoIptables) {
			offWhy = fmt.Sprintf("srt did not warn that %s with iptables-restore hidden (it said %q): capture could not be turned off this way (does srt install its rules without iptables-restore now?)", warnNoIptables, strings.TrimSpace(said))
			masked.close()
			masked = nil
		}
	}
	if _, said, err := timed(nil, sandboxed); err != nil {
		return err
	} else if strings.Contains(said, warnCaptureOff) {
		return fmt.Errorf("capture is off on this machine, so there is nothing to measure: srt said %q", strings.TrimSpace(said))
	}

	// Warm up all (page cache, srt's bubblewrap version cache), then
	// measure, interleaved.
	var tb, ton, toff []time.Duration
	for i := -3; i < runs; i++ {
		d, _, err := timed(nil, bare)
		if err != nil {
			return fmt.Errorf("bare bwrap: %w", err)
		}
		don, said, err := timed(nil, sandboxed)
		if err != nil {
			return err
		}
		if strings.Contains(said, warnCaptureOff) {
			return fmt.Errorf("srt turned capture off during the run: %q", strings.TrimSpace(said))
		}
		var doff time.Duration
		if masked != nil {
			if doff, said, err = timed(masked, sandboxed); err != nil {
				return fmt.Errorf("srt, capture off: %w", err)
			}
			if !strings.Contains(said, warnNoIptables) {
				return fmt.Errorf("srt with iptables hidden stopped warning that %s: %q", warnNoIptables, strings.TrimSpace(said))
			}
		}
		if i >= 0 {
			tb, ton = append(tb, d), append(ton, don)
			if masked != nil {
				toff = append(toff, doff)
			}
		}
	}
	detail := func(ds []time.Duration) string {
		return fmt.Sprintf("median %6.2f ms (min %.2f, max %.2f)", ms2(median(ds)), ms2(minD(ds)), ms2(maxD(ds)))
	}
	mb, mon := median(tb), median(ton)
	if masked != nil {
		moff := median(toff)
		ratio := float64(mon) / float64(moff)
		line("(d) startup, capture on/off", fmt.Sprintf("%.2f / %.2f ms", ms2(mon), ms2(moff)),
			"srt -c true without capture", ratio, "<= 1.10", ptr(ratio <= 1.1))
	} else {
		fmt.Printf("  (d) startup, capture on/off      NOT MEASURED: %s\n", offWhy)
	}
	fmt.Printf("      bare bwrap true          %s\n", detail(tb))
	fmt.Printf("      srt -c true, capture on  %s  ratio to bare bwrap %.2f\n", detail(ton), float64(mon)/float64(mb))
	if masked != nil {
		fmt.Printf("      srt -c true, capture off %s  ratio to bare bwrap %.2f (iptables-restore hidden; srt warned that %s)\n",
			detail(toff), float64(median(toff))/float64(mb), warnNoIptables)
	}
	return nil
}

// maskedThread runs functions on one OS thread that has a mount namespace
// of its own, in which iptables-restore and ip6tables-restore, wherever
// srt looks for them (PATH, then the sbin and bin directories), are
// /dev/null: a program started from it finds no iptables. The thread is
// never handed back to Go's scheduler; it ends with close.
type maskedThread struct {
	jobs chan func()
}

// newMaskedThread makes the thread, or says why it cannot.
func newMaskedThread() (*maskedThread, string) {
	if os.Geteuid() != 0 {
		return nil, "hiding iptables-restore from srt takes root (a mount namespace); run scripts/bench capture as root"
	}
	t := &maskedThread{jobs: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if err := hideIptables(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for job := range t.jobs {
			job()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Sprintf("hiding iptables-restore from srt: %v", err)
	}
	return t, ""
}

// hideIptables gives the calling thread a private mount namespace and
// mounts /dev/null over every iptables-restore and ip6tables-restore srt
// could find (srt/sandbox/capture.go lookSbin).
func hideIptables() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	// Nothing mounted here may reach the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	for _, name := range []string{"iptables-restore", "ip6tables-restore"} {
		var paths []string
		if p, err := exec.LookPath(name); err == nil {
			paths = append(paths, p)
		}
		for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
			paths = append(paths, filepath.Join(d, name))
		}
		hidden := 0
		for _, p := range paths {
			fi, err := os.Stat(p) // through links: the mount lands on the file they lead to
			if err != nil {
				continue
			}
			hidden++
			if !fi.Mode().IsRegular() {
				continue // hidden already, through a link to a file hidden before
			}
			if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("mounting /dev/null over %s: %w", p, err)
			}
		}
		if hidden == 0 {
			return errors.New(name + " was not found")
		}
	}
	return nil
}

// do runs f on the thread and returns when it has.
func (t *maskedThread) do(f func()) {
	done := make(chan struct{})
	t.jobs <- func() { f(); close(done) }
	<-done
}

func (t *maskedThread) close() { close(t.jobs) }
