//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond for up to 20 seconds; on a timeout the failure shows
// what the outputs given hold.
func waitFor(t *testing.T, cond func() bool, what string, outputs ...fmt.Stringer) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	shown := ""
	for _, o := range outputs {
		shown += fmt.Sprintf("\n--- output\n%s", o)
	}
	t.Fatalf("timed out waiting for %s%s", what, shown)
}

// waitExit waits for cmd to end; after 30 s it kills it and fails the test
// with its output.
func waitExit(t *testing.T, cmd *exec.Cmd, out fmt.Stringer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("timed out:\n%s", out.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// readAll reads r to its end.
func readAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}
