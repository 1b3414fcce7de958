package e2e

import (
	"net"
	"os"
	"os/exec"
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
		// socketpair of type typ as its standard input.
		run := func(typ int, args ...string) probeRun {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, typ|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			in, other := os.NewFile(uintptr(fds[0]), "in"), os.NewFile(uintptr(fds[1]), "other")
			defer in.Close()
			defer other.Close()
			var cmd *exec.Cmd
			if len(args) > 0 {
				cmd = w.command(nil, append(args, "--", probeBin(t), "sendto-stdin", path)...)
			} else {
				cmd = exec.Command(probeBin(t), "sendto-stdin", path)
				w.asRunner(cmd)
			}
			cmd.Stdin = in
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			return newProbeRun(result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()})
		}
		s := fsSettings(writeCwd)
		p := run(syscall.SOCK_DGRAM, "-s", w.settings(s))
		expect(t, p.result, 125, "srt: standard input is a Unix datagram socket, through which the command could send to any Unix socket on the host", "!RESULT")
		if arrived() {
			t.Fatalf("ESCAPE: a datagram sent through an inherited socket reached a host Unix socket\n%s", p.result)
		}
		// A stream socket as stdin is fine: sendto's address is ignored
		// on a connected stream socket (EISCONN), nothing arrives.
		want(t, run(syscall.SOCK_STREAM, "-s", w.settings(s)), "sendto-stdin", "EISCONN")
		if arrived() {
			t.Fatal("ESCAPE: a datagram sent through an inherited stream socket reached a host Unix socket")
		}
		// Controls: where every Unix socket is allowed, and outside any
		// sandbox, the same attack delivers the datagram.
		all := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":` + writeCwd + `}`
		want(t, run(syscall.SOCK_DGRAM, "-s", w.settings(all)), "sendto-stdin", "ok")
		if !arrived() {
			t.Fatal("control: with allowAllUnixSockets the datagram did not arrive")
		}
		want(t, run(syscall.SOCK_DGRAM), "sendto-stdin", "ok")
		if !arrived() {
			t.Fatal("control: outside the sandbox the datagram did not arrive")
		}
	})
}
