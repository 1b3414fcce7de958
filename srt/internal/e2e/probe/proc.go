//go:build linux

package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Attacks on other processes: seeing them, tracing them, reading their
// memory, signalling them.
func init() {
	register("proc-list", 1, procList)
	register("fds", 0, fds)
	register("ptrace-all", 0, func([]string) {
		for _, pid := range pids() {
			fmt.Printf("PROC %d %s\n", pid, comm(pid))
			tracePid(strconv.Itoa(pid), pid)
		}
	})
	register("ptrace-child", 0, ptraceChild)
	register("kill-all", 0, killAll)
	register("kill", 2, killOne)
}

// comm is a process's name, or "?" when it cannot be read.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// procList says how many other processes are visible and whether any has
// the marker in its command line. The marker comes hex-encoded: the init
// stage's command line (readable in /proc/1/cmdline) holds the probe's
// arguments, and must not count as a sighting.
func procList(a []string) {
	marker, err := hex.DecodeString(a[0])
	if err != nil {
		usage()
	}
	found := "absent"
	ps := pids()
	for _, pid := range ps {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		fmt.Printf("PROC %d %s\n", pid, comm(pid))
		if bytes.Contains(cmdline, marker) {
			found = "found"
		}
	}
	reportWord("proc-count", strconv.Itoa(len(ps)))
	reportWord("proc-marker", found)
}

// fds lists this process's open descriptors: the test expects 0, 1 and 2
// only. The Go runtime's own (the cgroup CPU files it reads for GOMAXPROCS,
// its poller's anonymous inodes) and the one reading the list are left out;
// every descriptor is shown on an FD line.
func fds([]string) {
	d, err := os.Open("/proc/self/fd")
	if !report("fds-open", err) {
		return
	}
	names, _ := d.Readdirnames(-1)
	var open []int
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == int(d.Fd()) {
			continue
		}
		target, _ := os.Readlink("/proc/self/fd/" + n)
		fmt.Printf("FD %d %s\n", fd, target)
		if strings.HasPrefix(target, "/sys/fs/cgroup/") || strings.HasPrefix(target, "anon_inode:") {
			continue
		}
		open = append(open, fd)
	}
	d.Close()
	sort.Ints(open)
	s := make([]string, len(open))
	for i, fd := range open {
		s[i] = strconv.Itoa(fd)
	}
	reportWord("fds", strings.Join(s, ","))
}

// tracePid attaches to pid with PTRACE_ATTACH and PTRACE_SEIZE and reads
// its memory with process_vm_readv, reporting each as <step>@label.
func tracePid(label string, pid int) {
	runtime.LockOSThread() // a tracer is a thread
	defer runtime.UnlockOSThread()
	if report("ptrace-attach@"+label, unix.PtraceAttach(pid)) {
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, unix.WALL, nil)
		unix.PtraceDetach(pid)
	}
	if report("ptrace-seize@"+label, unix.PtraceSeize(pid)) {
		unix.PtraceDetach(pid)
	}
	buf := make([]byte, 16)
	_, err := unix.ProcessVMReadv(pid,
		[]unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}},
		[]unix.RemoteIovec{{Base: mappedAddr(pid), Len: len(buf)}}, 0)
	report("vm-read@"+label, err)
}

// mappedAddr is the start of pid's first mapping when /proc tells it, else
// an address of a typical non-PIE executable (process_vm_readv checks the
// permission before the address).
func mappedAddr(pid int) uintptr {
	maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err == nil {
		start, _, _ := strings.Cut(string(maps), "-")
		if v, err := strconv.ParseUint(start, 16, 64); err == nil {
			return uintptr(v)
		}
	}
	return 0x400000
}

// ptraceChild is the control of ptrace-all: the same steps on a child of
// the probe, which nothing protects.
func ptraceChild([]string) {
	pid, err := startSleeper()
	if !report("start-child", err) {
		return
	}
	tracePid("child", pid)
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
}

// startSleeper starts a child that waits to be killed.
func startSleeper() (int, error) {
	return syscall.ForkExec("/proc/self/exe", []string{"probe", "sleep"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
}

func init() {
	register("sleep", 0, func([]string) { time.Sleep(time.Minute) })
}

// killAll sends SIGKILL to every process it may signal (kill(-1)). A child
// of its own shows the call does reach what it can see.
func killAll([]string) {
	pid, err := startSleeper()
	if !report("start-child", err) {
		return
	}
	report("kill-all", unix.Kill(-1, unix.SIGKILL))
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	if ws.Signaled() && ws.Signal() == unix.SIGKILL {
		reportWord("kill-all-child", "killed")
	} else {
		reportWord("kill-all-child", "alive")
	}
}

// killOne sends a signal (by name, e.g. KILL) to pid, then says it is
// still running.
func killOne(a []string) {
	pid, err := strconv.Atoi(a[0])
	if err != nil {
		usage()
	}
	sig := unix.SignalNum("SIG" + a[1])
	if sig == 0 {
		usage()
	}
	report("kill@"+a[0], unix.Kill(pid, sig))
	time.Sleep(300 * time.Millisecond)
	reportWord("after-kill", "alive")
}
