package seccomp

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds the terminal-injection probes: each opens a fresh
// pseudo-terminal pair, so the run before the filter and the run under it
// (both in the re-executed child, see install_linux_test.go) start alike.

const (
	probeTIOCSTI       = "ioctl(pty slave, TIOCSTI)"
	probeTIOCSTIHigh   = "ioctl(pty slave, TIOCSTI|0xffffffff00000000)"
	probeTIOCLINUX     = "ioctl(pty slave, TIOCLINUX)"
	probeTCGETS        = "ioctl(pty slave, TCGETS)"
	probeFIONREAD      = "ioctl(pty slave, FIONREAD)"
	probeAdoptInject   = "child: setsid, TIOCSCTTY on stdin (pty slave), TIOCSTI"
	injectedByte       = 'x'
	tioclGetShiftState = 6 // a read-only TIOCLINUX subcode; a pty never reaches it
)

var ptyProbes = []probe{
	// Without the filter, root succeeds here through CAP_SYS_ADMIN although the
	// pty is not its controlling terminal; another uid gets EPERM from the kernel.
	{probeTIOCSTI, true, "EPERM", func() string { return injectDirect(unix.TIOCSTI) }},
	// the kernel takes the request as an unsigned int and ignores the high word
	{probeTIOCSTIHigh, true, "EPERM", func() string { return injectDirect(0xffffffff_00000000 | unix.TIOCSTI) }},
	// a pty is not a virtual console: the kernel alone answers an error, never pastes
	{probeTIOCLINUX, true, "EPERM", func() string {
		return onPty(func(p ptyPair) string {
			sub := [2]byte{tioclGetShiftState}
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p.slave), unix.TIOCLINUX, uintptr(unsafe.Pointer(&sub[0])))
			return errnoName(e)
		})
	}},
	{probeTCGETS, true, "OK", func() string {
		return onPty(func(p ptyPair) string {
			_, err := unix.IoctlGetTermios(p.slave, unix.TCGETS)
			return errName(err)
		})
	}},
	{probeFIONREAD, true, "OK", func() string {
		return onPty(func(p ptyPair) string {
			_, err := unix.IoctlGetInt(p.slave, unix.TIOCINQ) // FIONREAD
			return errName(err)
		})
	}},
	// The escape itself: a child whose stdin is a pty that is nobody's
	// controlling terminal starts a session, adopts the pty and injects.
	// Works without the filter for any uid while dev.tty.legacy_tiocsti is 1.
	{probeAdoptInject, true, "EPERM", adoptAndInject},
}

// controls are the probes whose answer without the filter must be OK (the
// byte really arrived in the terminal's input queue) for the answer under the
// filter to show the filter at work. The value says whether the pty was the
// controlling terminal of the process that called TIOCSTI.
var controls = map[string]bool{
	probeTIOCSTI:     false,
	probeTIOCSTIHigh: false,
	probeAdoptInject: true,
}

// ptyPair is a pseudo-terminal opened the way a terminal emulator does it:
// /dev/ptmx, TIOCSPTLCK to unlock, TIOCGPTN for the number, then the slave,
// neither end becoming a controlling terminal (O_NOCTTY). The slave is put in
// raw mode with VMIN 0 and VTIME 0, so a read returns at once with what its
// input queue holds: where TIOCSTI puts its byte, and what the host side, the
// shell reading that terminal, would read as typed input.
type ptyPair struct{ master, slave int }

func openPty() (p ptyPair, err error) {
	p.master, p.slave = -1, -1
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.master, err = unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err != nil {
		return p, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err = unix.IoctlSetPointerInt(p.master, unix.TIOCSPTLCK, 0); err != nil {
		return p, fmt.Errorf("TIOCSPTLCK: %w", err)
	}
	n, err := unix.IoctlGetUint32(p.master, unix.TIOCGPTN)
	if err != nil {
		return p, fmt.Errorf("TIOCGPTN: %w", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	if p.slave, err = unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err != nil {
		return p, fmt.Errorf("open %s: %w", name, err)
	}
	t, err := unix.IoctlGetTermios(p.slave, unix.TCGETS)
	if err != nil {
		return p, fmt.Errorf("TCGETS: %w", err)
	}
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 0, 0
	if err = unix.IoctlSetTermios(p.slave, unix.TCSETS, t); err != nil {
		return p, fmt.Errorf("TCSETS: %w", err)
	}
	return p, nil
}

func (p ptyPair) close() {
	for _, fd := range []int{p.slave, p.master} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// expectInjected reports OK when the slave's input queue holds exactly the
// injected byte.
func (p ptyPair) expectInjected() string {
	buf := make([]byte, 64)
	n, err := unix.Read(p.slave, buf)
	if err != nil {
		return "TIOCSTI OK, but reading the slave: " + errName(err)
	}
	if got := string(buf[:n]); got != string(rune(injectedByte)) {
		return fmt.Sprintf("TIOCSTI OK, but the slave's input queue holds %q", got)
	}
	return "OK"
}

func onPty(f func(ptyPair) string) string {
	p, err := openPty()
	if err != nil {
		return "pty: " + err.Error()
	}
	defer p.close()
	return f(p)
}

// injectDirect calls ioctl(slave, req, &c) on a pty that is not the caller's
// controlling terminal.
func injectDirect(req uint64) string {
	return onPty(func(p ptyPair) string {
		c := byte(injectedByte)
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p.slave), uintptr(req), uintptr(unsafe.Pointer(&c)))
		if e != 0 {
			return unix.ErrnoName(e)
		}
		return p.expectInjected()
	})
}

// adoptAndInject execs this test binary as a new session leader with the pty
// slave as its stdin; it answers with what injectAsControllingTerminal says.
func adoptAndInject() string {
	return onPty(func(p ptyPair) string {
		fd, err := unix.Dup(p.slave)
		if err != nil {
			return "dup: " + errName(err)
		}
		stdin := os.NewFile(uintptr(fd), "pty-slave")
		defer stdin.Close()
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = append(os.Environ(), childEnv+"=tiocsti")
		cmd.Stdin = stdin
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.Output()
		if err != nil {
			return "exec: " + errName(err)
		}
		if r := strings.TrimSpace(string(out)); r != "OK" {
			return r
		}
		return p.expectInjected()
	})
}

// injectAsControllingTerminal is the hostile command: a session leader with no
// controlling terminal, stdin a pty nobody controls. It takes the pty as its
// controlling terminal, which the kernel allows any uid, then injects.
func injectAsControllingTerminal() string {
	if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
		return "TIOCSCTTY: " + errName(err)
	}
	c := byte(injectedByte)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	return errnoName(e)
}

func errnoName(e syscall.Errno) string {
	if e != 0 {
		return unix.ErrnoName(e)
	}
	return "OK"
}

// explainControl says why a control probe did not succeed without the filter,
// and whether that is a property of the environment (the kernel itself refuses
// injection there) rather than a fault.
func explainControl(before string, ctty bool) (why string, envLimited bool) {
	legacy := "absent (before Linux 6.2 there is no switch: TIOCSTI is always available)"
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil {
		legacy = strings.TrimSpace(string(b))
	}
	admin := hasCapSysAdmin()
	facts := fmt.Sprintf("uid %d, CAP_SYS_ADMIN in CapEff %v, dev.tty.legacy_tiocsti %s, pty is the caller's controlling terminal %v",
		os.Getuid(), admin, legacy, ctty)
	switch {
	case before == "EIO" && legacy == "0" && !admin:
		return "dev.tty.legacy_tiocsti is 0, so the kernel refuses TIOCSTI to callers without CAP_SYS_ADMIN with EIO; injection cannot be shown here, though the filter's EPERM still differs from the kernel's own answer (" + facts + ")", true
	case before == "EPERM" && !ctty && !admin:
		return "the kernel allows TIOCSTI on a terminal other than the caller's controlling one only with CAP_SYS_ADMIN, so it refuses this call itself with EPERM, the errno the filter uses: this probe cannot tell the two apart, and the setsid+TIOCSCTTY probe is the control for this uid (" + facts + ")", true
	}
	return "unexpected (" + facts + ")", false
}

// hasCapSysAdmin reads CapEff; inside a user namespace this can say yes where
// the kernel's capable(), which asks about the initial namespace, says no.
func hasCapSysAdmin() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:\t"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}
