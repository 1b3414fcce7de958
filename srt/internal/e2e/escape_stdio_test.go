//go:build linux

package e2e

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEscapeInheritedDatagramSocket hands the command a Unix datagram
// socket as its standard input, as a supervisor talking to its children
// over socketpairs might. sendto() with a path overrides such a socket's
// peer, so the command could reach every host datagram socket (syslog,
// journald, notify sockets) without ever calling socket(): srt refuses to
// start it (found by the fresh hostile review of issue 10). A stream
// socketpair stays usable as stdin, and with allowAllUnixSockets the same
// datagram goes through.
func TestEscapeInheritedDatagramSocket(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		path := w.path("home/host-dgram.sock")
		l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		os.Chmod(path, 0o777)
		arrived := func() bool {
			l.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			buf := make([]byte, 64)
			n, _, err := l.ReadFrom(buf)
			return err == nil && string(buf[:n]) == "PROBE-DGRAM"
		}
		// run runs the probe's sendto-stdin attack with one end of a
		// socketpair of type typ as its standard input: in a sandbox with
		// the settings, or on the host when settingsJSON is "".
		run := func(typ int, settingsJSON string) probeRun {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fds[1])
			return w.stdinRun(t, fds[0], settingsJSON, "sendto-stdin", path)
		}
		s := fsSettings(writeCwd)
		p := run(syscall.SOCK_DGRAM, s)
		expect(t, p.result, 125, "srt: standard input is a Unix datagram socket, through which the command could send to any Unix socket on the host", "!RESULT")
		if arrived() {
			t.Fatalf("ESCAPE: a datagram sent through an inherited socket reached a host Unix socket\n%s", p.result)
		}
		// A stream socket as stdin is fine: sendto's address is ignored
		// on a connected stream socket (EISCONN), nothing arrives.
		want(t, run(syscall.SOCK_STREAM, s), "sendto-stdin", "EISCONN")
		if arrived() {
			t.Fatal("ESCAPE: a datagram sent through an inherited stream socket reached a host Unix socket")
		}
		// Controls: where every Unix socket is allowed, and outside any
		// sandbox, the same attack delivers the datagram.
		all := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":` + writeCwd + `}`
		want(t, run(syscall.SOCK_DGRAM, all), "sendto-stdin", "ok")
		if !arrived() {
			t.Fatal("control: with allowAllUnixSockets the datagram did not arrive")
		}
		want(t, run(syscall.SOCK_DGRAM, ""), "sendto-stdin", "ok")
		if !arrived() {
			t.Fatal("control: outside the sandbox the datagram did not arrive")
		}
	})
}

// stdinRun runs the probe attack with the descriptor fd as its standard
// input: in a sandbox with the given settings, or on the host when
// settingsJSON is "". It closes fd.
func (w *workspace) stdinRun(t *testing.T, fd int, settingsJSON string, attack ...string) probeRun {
	t.Helper()
	in := os.NewFile(uintptr(fd), "stdin")
	defer in.Close()
	var cmd *exec.Cmd
	if settingsJSON != "" {
		cmd = w.command(nil, append([]string{"-s", w.settings(settingsJSON), "--", probeBin(t)}, attack...)...)
	} else {
		cmd = exec.Command(probeBin(t), attack...)
		w.asRunner(cmd)
	}
	cmd.Stdin = in
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	return newProbeRun(result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()})
}

// TestEscapeInheritedDescriptors hands the command, as its standard input,
// each kind of descriptor that leads out of the sandbox (found by the
// second fresh review of issue 10, beside the datagram socket above): a
// socket of the host's network namespace, connected or not (a TCP socket
// can be disconnected with connect(AF_UNSPEC) and connected anywhere), an
// unconnected Unix stream socket, and a directory (openat() relative to
// it walks the host's mount, past the denies). srt refuses to start the
// command for each (exit 125), nothing arrives, nothing is read; a
// connected and a listening Unix stream socket stay usable. Controls: the
// same attacks on the host deliver and read.
func TestEscapeInheritedDescriptors(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := fsSettings(writeCwd)
		sock := func(domain, typ int) int {
			fd, err := syscall.Socket(domain, typ|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}
		hidden := refused("ENOENT")
		refusedRun := func(p probeRun, what string) {
			t.Helper()
			expect(t, p.result, 125, "srt: standard input is "+what, "!RESULT")
		}
		got := make(chan string, 8)
		serve := func(l net.Listener) {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 64)
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, _ := c.Read(buf)
				got <- string(buf[:n])
				c.Close()
			}
		}
		arrived := func() bool {
			select {
			case m := <-got:
				return m == "PROBE-R2-STREAM"
			case <-time.After(500 * time.Millisecond):
				return false
			}
		}

		// UDP.
		udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		uport := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
		refusedRun(w.stdinRun(t, sock(syscall.AF_INET, syscall.SOCK_DGRAM), s, "r2-sendto-stdin-inet", "127.0.0.1", uport), "a network socket of the host's")
		want(t, w.stdinRun(t, sock(syscall.AF_INET, syscall.SOCK_DGRAM), "", "r2-sendto-stdin-inet", "127.0.0.1", uport), "r2-sendto-inet", "ok")

		// TCP, unconnected and connected.
		tl, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer tl.Close()
		go serve(tl)
		tport := strconv.Itoa(tl.Addr().(*net.TCPAddr).Port)
		refusedRun(w.stdinRun(t, sock(syscall.AF_INET, syscall.SOCK_STREAM), s, "r2-connect-stdin-inet", "127.0.0.1", tport), "a network socket of the host's")
		if arrived() {
			t.Fatal("ESCAPE: an inherited TCP socket connected to the host")
		}
		connected := func() int {
			c, err := net.Dial("tcp4", tl.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			// A descriptor of our own: f's finalizer would close its.
			fd, err := syscall.Dup(int(f.Fd()))
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}
		refusedRun(w.stdinRun(t, connected(), s, "r2-reconnect-stdin-inet", "127.0.0.1", tport), "a network socket of the host's")
		<-got // the connection made for the run, which sent nothing
		if arrived() {
			t.Fatal("ESCAPE: an inherited connected TCP socket was connected again to the host")
		}
		want(t, w.stdinRun(t, connected(), "", "r2-reconnect-stdin-inet", "127.0.0.1", tport), "r2-disconnect", "ok", "r2-connect-inet", "ok")
		<-got
		if !arrived() {
			t.Fatal("control: on the host the reconnected TCP socket did not arrive")
		}

		// An unconnected Unix stream socket.
		path := w.path("home/host-stream.sock")
		ul, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ul.Close()
		os.Chmod(path, 0o777)
		go serve(ul)
		refusedRun(w.stdinRun(t, sock(syscall.AF_UNIX, syscall.SOCK_STREAM), s, "r2-connect-stdin-unix", path), "an unconnected Unix socket")
		if arrived() {
			t.Fatal("ESCAPE: an inherited unconnected Unix socket connected to the host")
		}
		want(t, w.stdinRun(t, sock(syscall.AF_UNIX, syscall.SOCK_STREAM), "", "r2-connect-stdin-unix", path), "r2-connect-unix", "ok")
		if !arrived() {
			t.Fatal("control: on the host the Unix stream connection did not arrive")
		}
		// A listening one runs (it cannot connect: EINVAL).
		lfd := sock(syscall.AF_UNIX, syscall.SOCK_STREAM)
		if err := syscall.Bind(lfd, &syscall.SockaddrUnix{Name: w.path("home/own-listener.sock")}); err != nil {
			t.Fatal(err)
		}
		syscall.Listen(lfd, 1)
		want(t, w.stdinRun(t, lfd, s, "r2-connect-stdin-unix", path), "r2-connect-unix", "EINVAL")

		// A directory above a denied file.
		secret := "INHERITED-DIR-SECRET-5b1"
		w.write("home/private/key", secret)
		d := fsSettings(`{"denyRead":["~/private"],"allowWrite":["."],"denyWrite":[]}`)
		dir := func() int {
			fd, err := syscall.Open(w.home, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}
		p := w.stdinRun(t, dir(), d, "r2-read-at-stdin", "private/key")
		noLeak(t, p, secret)
		refusedRun(p, "a directory")
		// Control: the deny holds by path inside, and on the host the
		// same attack reads the file.
		want(t, w.probe(d, "read", w.home+"/private/key"), "read", hidden)
		want(t, w.stdinRun(t, dir(), "", "r2-read-at-stdin", "private/key"), "r2-read", "ok")
	})
}

// TestStdioFilesReopen: a file handed as stdout, opened for writing only,
// is refused where the rules hide it (the command could open it again for
// reading through /proc/self/fd/1, past the deny), as a write-protected
// stdin is (TestReview3EscapeStdinReopen); the everyday forms run: a file
// read as stdin with the default settings, one written as stdout in the
// working directory.
func TestStdioFilesReopen(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		run := func(settingsJSON, command string, stdin, stdout *os.File) result {
			cmd := w.command(nil, "-s", w.settings(settingsJSON), "-c", command)
			cmd.Stdin, cmd.Stdout = stdin, stdout
			var stderr strings.Builder
			cmd.Stderr = &stderr
			cmd.Run()
			return result{stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		}
		secretLog := w.write("home/secret/log", "SECRET-LOG-LINE-93c\n")
		s := fsSettings(`{"denyRead":["~/secret"],"allowWrite":["."],"denyWrite":[]}`)
		out, err := os.OpenFile(secretLog, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := run(s, "cat </proc/self/fd/1 >&2", nil, out)
		out.Close()
		if testBackend == "landlock" {
			// No mount to lead past: Landlock refuses the reopen.
			expect(t, r, 1, "/proc/self/fd/1: "+errnoText["EACCES"], "!SECRET-LOG-LINE")
		} else {
			expect(t, r, 1, "srt: standard output is the file "+secretLog+", opened for writing only, which the sandbox may not read", "!SECRET-LOG-LINE")
		}
		// Control: the deny holds by name.
		want(t, w.probe(s, "read", secretLog), "read", refused("ENOENT"))

		// Everyday forms.
		data := w.write("home/data.txt", "one\ntwo\n")
		in, err := os.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		var b strings.Builder
		cmd := w.command(nil, "-c", "wc -l")
		cmd.Stdin, cmd.Stdout = in, &b
		if err := cmd.Run(); err != nil || strings.TrimSpace(b.String()) != "2" {
			t.Fatalf("wc -l < data.txt: %v %q", err, b.String())
		}
		o, err := os.Create(w.path("home/proj/out.txt"))
		if err != nil {
			t.Fatal(err)
		}
		w.chown(o.Name())
		expect(t, run(fsSettings(writeCwd), "echo written", nil, o), 0)
		o.Close()
		if got, _ := os.ReadFile(w.path("home/proj/out.txt")); string(got) != "written\n" {
			t.Fatalf("> out.txt: %q", got)
		}
	})
}
