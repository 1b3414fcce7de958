//go:build linux

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a new pseudo-terminal: posix_openpt, grantpt (devpts
// already gives the slave to its opener's uid), unlockpt, ptsname, open.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal("unlockpt:", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal("ptsname:", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// drain returns what the terminal has written to the master side within a
// short wait: with ECHO on (the default), a byte pushed into the input
// queue by TIOCSTI is echoed there.
func drain(t *testing.T, master *os.File) string {
	t.Helper()
	var got strings.Builder
	buf := make([]byte, 256)
	for {
		fds := []unix.PollFd{{Fd: int32(master.Fd()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 300)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 || fds[0].Revents&unix.POLLIN == 0 {
			return got.String()
		}
		k, err := unix.Read(int(master.Fd()), buf)
		if err != nil || k <= 0 {
			return got.String()
		}
		got.Write(buf[:k])
	}
}

// ttyRun runs cmd with the pty's slave as stdin; with ctty, in a new session
// whose controlling terminal the slave is, as srt is when started from a
// shell in a terminal.
func ttyRun(t *testing.T, cmd *exec.Cmd, slave *os.File, ctty bool) probeRun {
	t.Helper()
	cmd.Stdin = slave
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if ctty {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	}
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return newProbeRun(result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()})
}

// TestEscapeTIOCSTI tries to push input into the terminal srt runs in.
// bubblewrap starts the sandbox in a new session, which has no controlling
// terminal, and TIOCSTI on a terminal that is not the caller's controlling
// one needs CAP_SYS_ADMIN in the initial user namespace: EPERM (this kernel
// still allows TIOCSTI at all: dev.tty.legacy_tiocsti = 1). Nor can the
// command make the terminal its controlling one: it is the controlling
// terminal of srt's session already, and stealing it needs CAP_SYS_ADMIN
// too (EPERM).
func TestEscapeTIOCSTI(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(fsSettings(writeCwd))
		for _, c := range []struct{ attack, outcome string }{
			{"tiocsti", "EPERM"},
			{"steal-tty", "EPERM"},
			{"open-tty", "ENXIO"}, // no controlling terminal
		} {
			master, slave := openPty(t)
			p := ttyRun(t, w.command(nil, "-s", s, "--", probeBin(t), c.attack), slave, true)
			want(t, p, c.attack, c.outcome)
			if got := drain(t, master); got != "" {
				t.Fatalf("ESCAPE: %s: the terminal got %q\n%s", c.attack, got, p.result)
			}
		}

		// Control: outside the sandbox, with the terminal as its
		// controlling one (setsid -c), the probe injects a byte and the
		// terminal echoes it.
		master, slave := openPty(t)
		cmd := exec.Command("setsid", "-c", probeBin(t), "tiocsti")
		cmd.Env = w.env()
		w.asRunner(cmd)
		want(t, ttyRun(t, cmd, slave, false), "tiocsti", "ok")
		if got := drain(t, master); got != "x" {
			t.Fatalf("control: the terminal echoed %q, want the injected x", got)
		}
	})
}

// TestEscapeTIOCSTIUnownedTerminal gives srt a terminal that is no
// session's controlling terminal (as a program that hands a pty to srt
// without making it the controlling terminal does). The command's new
// session then has no claim on it either, but nothing stops a process of
// the command from starting a session of its own and adopting the terminal
// (TIOCSCTTY needs no privilege for a terminal without a session), after
// which TIOCSTI is allowed: what it pushes is read by whatever reads the
// terminal after srt. The bytes must not reach the terminal.
func TestEscapeTIOCSTIUnownedTerminal(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(fsSettings(writeCwd))
		master, slave := openPty(t)
		p := ttyRun(t, w.command(nil, "-s", s, "--", probeBin(t), "steal-tty"), slave, false)
		if got := drain(t, master); got != "" || p.steps["tiocsti"] == "ok" {
			t.Errorf("ESCAPE: the sandbox adopted a terminal with no session and pushed input into it "+
				"(steal-tty %s, tiocsti %s; the terminal echoed %q)\n%s", p.steps["steal-tty"], p.steps["tiocsti"], got, p.result)
		}
		// Control: outside the sandbox the same code adopts the terminal
		// and injects a byte.
		master, slave = openPty(t)
		cmd := exec.Command(probeBin(t), "steal-tty")
		cmd.Env = w.env()
		w.asRunner(cmd)
		want(t, ttyRun(t, cmd, slave, false), "steal-tty", "ok", "tiocsti", "ok")
		if got := drain(t, master); got != "x" {
			t.Fatalf("control: the terminal echoed %q, want the injected x", got)
		}
	})
}
