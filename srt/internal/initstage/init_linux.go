package initstage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/netns"
)

// Main runs the init stage and exits if the process was started as one;
// otherwise it returns at once. Call it first thing in main (the srt binary
// and the sandbox package do).
func Main() {
	if len(os.Args) < 2 {
		return
	}
	switch {
	case strings.HasPrefix(os.Args[1], "--srt-init-stage"):
		os.Exit(run(os.Args[1:]))
	case strings.HasPrefix(os.Args[1], "--srt-rlimits"):
		os.Exit(rlimitMain(os.Args[1:]))
	case strings.HasPrefix(os.Args[1], "--srt-connect"):
		os.Exit(connectMain(os.Args[1:]))
	case strings.HasPrefix(os.Args[1], "--srt-netns"):
		os.Exit(netns.HelperMain(os.Args[1:]))
	}
}

// nullSlot is the descriptor number the command gets /dev/null on (the
// spec's DevNullFD), and nullFD where the init stage holds it open.
var nullSlot, nullFD int

// forwarded are the signals srt relays, and that the init stage also
// forwards when they are sent to it inside the sandbox.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH}

func run(args []string) int {
	// One thread does the set-up that is per thread (the session keyring)
	// and starts the command, which inherits that thread's credentials.
	runtime.LockOSThread()
	spec, command, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: init stage: %v\n", err)
		return 125
	}
	// kill(-1) below would reach every process the user owns outside a
	// PID namespace: refuse to run anywhere but as a sandbox's PID 1,
	// unless srt started it without namespaces (killAll, nons_linux.go).
	if err := checkPID1(spec); err != nil {
		fmt.Fprintf(os.Stderr, "srt: %v\n", err)
		return 125
	}
	if err := checkStdio(!spec.BlockUnixSockets, spec.PassFDs); err != nil {
		fmt.Fprintf(os.Stderr, "srt: %v\n", err)
		return 125
	}
	// Nothing inherited may reach the command but stdio.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintf(os.Stderr, "srt: init stage: cannot mark descriptors close-on-exec: %v\n", err)
		return 125
	}
	// Before anything else: the mounts must be what srt granted.
	if spec.CheckMounts {
		if err := checkMounts(spec); err != nil {
			fmt.Fprintf(os.Stderr, "srt: init stage: %v\n", err)
			return 125
		}
	}
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&[]byte("srt-init\x00")[0])), 0, 0, 0)
	// Not dumpable: the command, same uid, cannot ptrace us or read our /proc files.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "srt: init stage: %v\n", err)
		return 125
	}
	if spec.DevNullFD > 0 {
		// Read-only: a command that writes to the slot learns that
		// nothing is there to take it (EBADF), instead of writing into
		// /dev/null as if srt read it.
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "srt: init stage: /dev/null: %v\n", err)
			return 125
		}
		nullSlot, nullFD = spec.DevNullFD, fd
	}
	if err := restrict(spec); err != nil {
		fmt.Fprintf(os.Stderr, "srt: init stage: %v\n", err)
		return 125
	}
	// The relay of signals sent to the init stage itself is registered
	// once the command runs: registering starts a thread, which is not on
	// the start-up path then. (Not signal.Ignore meanwhile: an ignored
	// signal stays ignored in the command.) Until it is in place only the
	// command could signal PID 1, and it would end its own sandbox.
	var early []byte // signals srt relayed before the network was ready
	var ctl control
	if spec.WaitNetwork {
		if early, err = waitNetwork(&ctl); err != nil {
			// srt is gone: nothing may start.
			return 128 + int(unix.SIGKILL)
		}
	}
	passed := spec.PassFDs
	if spec.NoNS.On && spec.NoNS.Net {
		passed = append(passed[:len(passed):len(passed)], spec.NoNS.Listeners...)
	}
	pid, err := start(command, passed, spec.Rlimits)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: cannot run %s: %v\n", command[0], err)
		if errors.Is(err, fs.ErrNotExist) {
			return 127
		}
		return 126
	}
	send([]byte{MsgStarted}, -1)

	for _, b := range early {
		unix.Kill(-pid, syscall.Signal(b))
	}
	go func() {
		sigs := make(chan os.Signal, 16)
		signal.Notify(sigs, forwarded...)
		relaySignals(pid, sigs)
	}()
	go watchControl(pid, &ctl)
	if spec.WatchListeners {
		go watchListeners(spec.IgnorePorts)
	}
	code := reap(pid)
	// The command is done: end everything it left behind, so that once srt
	// hears the status no process of the sandbox is left to write anything,
	// and srt need not wait for the kernel to take the namespaces down.
	killAll()
	finishObserver()
	send([]byte{MsgExited, byte(code)}, -1)
	return code
}

// start runs the command in a process group of its own, so that a forwarded
// signal reaches the whole job, as a terminal's would. (syscall.ForkExec,
// not os.StartProcess: the latter probes for pidfd support with an extra
// fork on first use, which every sandbox start would pay for.)
//
// With limits, the command is started through the init stage's re-exec
// that sets them (RlimitFlag), from the executable's descriptor, given at
// the first slot above the command's.
func start(command []string, passed []PassFD, limits []Rlimit) (int, error) {
	files := []uintptr{0, 1, 2}
	put := func(slot int, fd uintptr) {
		for len(files) <= slot {
			files = append(files, ^uintptr(0)) // closed in the child
		}
		files[slot] = fd
	}
	if nullSlot > 0 {
		put(nullSlot, uintptr(nullFD))
	}
	for _, p := range passed {
		put(p.To, uintptr(p.From))
	}
	path, argv := command[0], command
	if len(limits) > 0 {
		slot := len(files)
		put(slot, ExeFD)
		path, argv = rlimitArgv(slot, limits, command)
	}
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
}

func relaySignals(pid int, sigs <-chan os.Signal) {
	for s := range sigs {
		unix.Kill(-pid, s.(syscall.Signal))
	}
}

// watchControl forwards each signal byte from srt; EOF or an error means srt
// is gone, and the sandbox must not outlive it.
func watchControl(pid int, ctl *control) {
	buf := make([]byte, 64)
	signal := func(b byte) { unix.Kill(-pid, syscall.Signal(b)) }
	connect := func(port uint16) { go connectLoopback(port) }
	for {
		n, err := unix.Read(ChannelFD, buf)
		if err == unix.EINTR {
			continue
		}
		ctl.feed(buf[:max(n, 0)], signal, func() {}, connect)
		if err != nil || n == 0 {
			killAll()
			os.Exit(128 + int(unix.SIGKILL))
		}
	}
}

// waitNetwork reads the channel until srt says the network is ready, and
// returns the signals it relayed meanwhile, for the command.
func waitNetwork(ctl *control) ([]byte, error) {
	var early []byte
	buf := make([]byte, 64)
	for {
		n, err := unix.Read(ChannelFD, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("srt closed the channel")
		}
		ready := false
		// Signals before and after the ready mark are all the
		// command's, relayed in order once it runs.
		ctl.feed(buf[:n], func(b byte) { early = append(early, b) },
			func() { ready = true }, func(port uint16) { go connectLoopback(port) })
		if ready {
			return early, nil
		}
	}
}

// reap waits for every child, orphans included, and returns the command's
// exit status once it is gone.
func reap(pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "srt: init stage: wait: %v\n", err)
			return 125
		}
		if got != pid {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
}
