//go:build linux

package e2e

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// listenUnix listens on a Unix address in the test process (the host's
// network namespace) and accepts until the test ends.
func listenUnix(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// TestEscapeSockets tries the sockets that reach past the sandbox's network
// namespace. Seccomp filter 1 refuses socket(AF_UNIX), socket(AF_VSOCK) and
// io_uring_setup with EPERM.
func TestEscapeSockets(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		abstract := fmt.Sprintf("srt-escape-%d", time.Now().UnixNano())
		listenUnix(t, "@"+abstract)
		// A socket on the filesystem, in a directory the sandbox can read,
		// that the runner may connect to (connect needs write permission
		// on the socket).
		path := w.path("home/host.sock")
		listenUnix(t, path)
		os.Chmod(path, 0o777)

		s := fsSettings(writeCwd)
		want(t, w.probe(s, "socket-unix"), "socket-unix", "EPERM")
		want(t, w.probe(s, "socket-vsock"), "socket-vsock", "EPERM")
		want(t, w.probe(s, "io-uring"), "io-uring", "EPERM")
		want(t, w.probe(s, "connect-abstract", abstract), "connect-abstract", "EPERM")
		want(t, w.probe(s, "connect-unix", path), "connect-unix", "EPERM")

		// Control: network.allowAllUnixSockets removes filter 1.
		open := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":` + writeCwd + `}`
		want(t, w.probe(open, "socket-unix"), "socket-unix", "ok")
		// (The Landlock backend's seccomp refuses vsock sockets outright.)
		vsock := "ok"
		if testBackend == "landlock" {
			vsock = "EPERM"
		}
		want(t, w.probe(open, "socket-vsock"), "socket-vsock", vsock)
		// io_uring stays refused: it also opens files with a mode no
		// seccomp rule sees (the set-id rules). Outside it works.
		want(t, w.probe(open, "io-uring"), "io-uring", "EPERM")
		want(t, w.hostProbe("io-uring"), "io-uring", "ok")
		// The host's abstract namespace belongs to the host's network
		// namespace: the name is not found from the sandbox's own
		// (ECONNREFUSED), even with Unix sockets allowed. (Landlock's
		// abstract-socket scope would refuse it too, with EPERM, were the
		// namespace shared.) Outside the sandbox the probe connects.
		abstractOpen := "ECONNREFUSED"
		if testBackend == "landlock" {
			abstractOpen = "EPERM" // one abstract namespace: Landlock's scope refuses
		}
		want(t, w.probe(open, "connect-abstract", abstract), "connect-abstract", abstractOpen)
		want(t, w.hostProbe("connect-abstract", abstract), "connect-abstract", "ok")
		// What the opt-out gives up: a socket on the filesystem is reached
		// by path, whatever the network namespace, so with
		// allowAllUnixSockets any host daemon listening where the sandbox
		// can read (docker.sock, the session bus, ssh-agent) is reachable.
		want(t, w.probe(open, "connect-unix", path), "connect-unix", "ok")
	})
}
