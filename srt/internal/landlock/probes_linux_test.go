package landlock

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A probe is one action the restricted child tries; want lists the accepted
// answers ("OK" or errno names), the first being the one the kernel should give.
type probe struct {
	name string
	want []string
	run  func(e env) string
}

// minABI names the probes an older kernel cannot enforce: below the ABI given,
// their answer is only logged.
var minABI = map[string]int{
	"truncate file outside":                    3,
	"kill(parent, 0)":                          scopeABI,
	"connect to abstract socket bound outside": scopeABI,
}

// env names the directories the parent prepared: in (granted), out (not
// granted, holding file, sub/ and granted.txt).
type env struct{ in, out, abstract string }

func (e env) i(name string) string { return filepath.Join(e.in, name) }
func (e env) o(name string) string { return filepath.Join(e.out, name) }

var (
	ok     = []string{"OK"}
	eacces = []string{"EACCES"}
)

var probes = []probe{
	{"create file inside", ok, func(e env) string { return write(e.i("new"), os.O_CREATE) }},
	{"append to file inside", ok, func(e env) string { return write(e.i("file"), os.O_APPEND) }},
	{"truncate file inside", ok, func(e env) string { return errName(unix.Truncate(e.i("file"), 0)) }},
	{"mkdir inside", ok, func(e env) string { return errName(unix.Mkdir(e.i("d"), 0o755)) }},
	{"rmdir inside", ok, func(e env) string { return errName(unix.Rmdir(e.i("d"))) }},
	{"symlink inside", ok, func(e env) string { return errName(unix.Symlink("/etc/passwd", e.i("link"))) }},
	{"mkfifo inside", ok, func(e env) string { return errName(unix.Mkfifo(e.i("fifo"), 0o644)) }},
	{"bind unix socket inside", ok, func(e env) string { return bindUnix(e.i("sock")) }},
	{"rename inside", ok, func(e env) string { return errName(unix.Rename(e.i("new"), e.i("renamed"))) }},
	{"unlink inside", ok, func(e env) string { return errName(unix.Unlink(e.i("renamed"))) }},
	{"write granted file outside", ok, func(e env) string { return write(e.o("granted.txt"), os.O_TRUNC) }},
	{"truncate granted file outside", ok, func(e env) string { return errName(unix.Truncate(e.o("granted.txt"), 0)) }},

	{"create file outside", eacces, func(e env) string { return write(e.o("new"), os.O_CREATE) }},
	{"create file next to granted file", eacces, func(e env) string { return write(e.o("granted.txt.bak"), os.O_CREATE) }},
	{"open file outside for writing", eacces, func(e env) string { return write(e.o("file"), 0) }},
	{"truncate file outside", eacces, func(e env) string { return errName(unix.Truncate(e.o("file"), 0)) }},
	{"unlink file outside", eacces, func(e env) string { return errName(unix.Unlink(e.o("file"))) }},
	{"mkdir outside", eacces, func(e env) string { return errName(unix.Mkdir(e.o("d"), 0o755)) }},
	{"rmdir outside", eacces, func(e env) string { return errName(unix.Rmdir(e.o("sub"))) }},
	{"symlink outside", eacces, func(e env) string { return errName(unix.Symlink("/etc/passwd", e.o("link"))) }},
	{"mkfifo outside", eacces, func(e env) string { return errName(unix.Mkfifo(e.o("fifo"), 0o644)) }},
	{"bind unix socket outside", eacces, func(e env) string { return bindUnix(e.o("sock")) }},
	{"rename within outside", eacces, func(e env) string { return errName(unix.Rename(e.o("file"), e.o("file2"))) }},
	{"rename inside -> outside", []string{"EACCES", "EXDEV"}, func(e env) string {
		write(e.i("mover"), os.O_CREATE)
		return errName(unix.Rename(e.i("mover"), e.o("mover")))
	}},
	{"rename outside -> inside", []string{"EACCES", "EXDEV"}, func(e env) string {
		return errName(unix.Rename(e.o("file"), e.i("stolen")))
	}},
	{"hard link outside file into inside", []string{"EXDEV", "EACCES"}, func(e env) string {
		return errName(unix.Link(e.o("file"), e.i("hardlink")))
	}},
	{"create file in /tmp", eacces, func(e env) string {
		return write(filepath.Join(os.TempDir(), fmt.Sprintf("srt-landlock-%d", os.Getpid())), os.O_CREATE)
	}},

	{"open /dev/null for writing (granted)", ok, func(env) string { return write("/dev/null", 0) }},
	{"read file outside", ok, func(e env) string { _, err := os.ReadFile(e.o("file")); return errName(err) }},
	{"read /etc/passwd", ok, func(e env) string { _, err := os.ReadFile("/etc/passwd"); return errName(err) }},
	{"list /", ok, func(e env) string { _, err := os.ReadDir("/"); return errName(err) }},
	{"exec /bin/true", ok, func(e env) string { return errName(exec.Command("/bin/true").Run()) }},
	{"sh -c 'echo x > outside'", []string{"Permission denied"}, func(e env) string { return sh("echo x > " + e.o("from-sh")) }},
	{"sh -c 'echo x > inside'", ok, func(e env) string { return sh("echo x > " + e.i("from-sh")) }},
	{"create outside from threads that existed before", eacces, func(e env) string {
		return onLockedThreads(func() string { return write(e.o("thread"), os.O_CREATE) })
	}},
	{"every thread: NoNewPrivs 1", ok, func(env) string { return allThreads("\nNoNewPrivs:\t1\n") }},

	{"kill(parent, 0)", []string{"EPERM"}, func(env) string { return errName(unix.Kill(os.Getppid(), 0)) }},
	{"kill(self, 0)", ok, func(env) string { return errName(unix.Kill(os.Getpid(), 0)) }},
	{"SIGTERM to own child", ok, func(env) string {
		// Restrict gives each thread a domain of its own: a child forked
		// on one thread is outside the domain of another, and a signal
		// from there is refused (EPERM, one CI run in many). Fork and
		// signal from one thread, as the init stage does (it restricts
		// only the thread that starts the command).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd := exec.Command("/bin/sleep", "10")
		if err := cmd.Start(); err != nil {
			return errName(err)
		}
		err := unix.Kill(cmd.Process.Pid, unix.SIGTERM)
		cmd.Wait()
		return errName(err)
	}},
	{"connect to abstract socket bound outside", []string{"EPERM"}, func(e env) string { return connectAbstract(e.abstract) }},
}

func errName(err error) string {
	if err == nil {
		return "OK"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func write(path string, flag int) string {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o644)
	if err != nil {
		return errName(err)
	}
	_, err = f.WriteString("x\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errName(err)
}

func bindUnix(path string) string {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "socket: " + errName(err)
	}
	defer unix.Close(fd)
	return errName(unix.Bind(fd, &unix.SockaddrUnix{Name: path}))
}

func connectAbstract(name string) string {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "socket: " + errName(err)
	}
	defer unix.Close(fd)
	return errName(unix.Connect(fd, &unix.SockaddrUnix{Name: name}))
}

// sh runs a shell command; a failure reports its stderr.
func sh(script string) string {
	out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput()
	if err == nil {
		return "OK"
	}
	if s := strings.TrimSpace(string(out)); strings.Contains(s, "Permission denied") {
		return "Permission denied"
	} else {
		return fmt.Sprintf("%v: %s", err, s)
	}
}

// lockedThreads are OS threads parked before Restrict; each later runs a
// probe on its own thread.
var lockedThreads []chan func()

func parkThreads(n int) {
	for i := 0; i < n; i++ {
		work := make(chan func())
		ready := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread stays this goroutine's
			close(ready)
			for f := range work {
				f()
			}
		}()
		<-ready
		lockedThreads = append(lockedThreads, work)
	}
}

func onLockedThreads(f func() string) string {
	var answers []string
	seen := map[string]bool{}
	for _, work := range lockedThreads {
		done := make(chan string)
		work <- func() { done <- f() }
		if a := <-done; !seen[a] {
			seen[a] = true
			answers = append(answers, a)
		}
	}
	return strings.Join(answers, ",")
}

func allThreads(line string) string {
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, path := range tasks {
		if b, err := os.ReadFile(path); err == nil && !strings.Contains(string(b), line) {
			return path + ": missing " + strings.TrimSpace(line)
		}
	}
	return "OK"
}
