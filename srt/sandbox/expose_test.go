//go:build linux

package sandbox

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConnectInsideTimeout: a request the init stage did not answer in
// time leaves port's queue, so that its late answer goes to the request
// after it, and a late answer nobody waits for is closed, not kept.
func TestConnectInsideTimeout(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	peer := os.NewFile(uintptr(fds[1]), "init stage's end")
	defer peer.Close()
	own := os.NewFile(uintptr(fds[0]), "srt's end")
	conn, err := net.FileConn(own)
	own.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := &Cmd{channel: conn.(*net.UnixConn)}
	saved := exposeTimeout
	exposeTimeout = 50 * time.Millisecond
	defer func() { exposeTimeout = saved }()

	if _, err := c.connectInside(8080); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("an unanswered request: %v", err)
	}
	if q := c.expose.waiting[8080]; len(q) != 0 {
		t.Fatalf("the timed-out request is still queued (%d)", len(q))
	}
	// The late answer: nobody waits, so it is closed.
	late := socketFile(t)
	c.connected(8080, late, 0)
	if late.Fd() != ^uintptr(0) {
		t.Error("a late answer nobody waited for was kept open")
	}

	// A second request waits while the first one's late answer comes: it
	// takes it.
	exposeTimeout = 5 * time.Second
	got := make(chan error, 1)
	go func() {
		conn, err := c.connectInside(8080)
		if err == nil {
			conn.Close()
		}
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.expose.mu.Lock()
		n := len(c.expose.waiting[8080])
		c.expose.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second request never queued")
		}
		time.Sleep(time.Millisecond)
	}
	c.connected(8080, socketFile(t), 0)
	if err := <-got; err != nil {
		t.Fatalf("the waiting request: %v", err)
	}
}

// socketFile is a connected stream socket, as the init stage's answer
// carries.
func socketFile(t *testing.T) *os.File {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fds[1])
	return os.NewFile(uintptr(fds[0]), "connected")
}
