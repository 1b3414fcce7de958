//go:build linux

package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/srtlink"
)

// The capture tests run srt's egress as srt does (srt/internal/egress):
// the reference decider and srt-proxy in srt's mode, joined by a socket
// pair, the test holding the decider's control channel (violations,
// updates, per-command lists) and srt-proxy's handoff channel.

var (
	deciderOnce sync.Once
	deciderBin  string
	deciderErr  error
)

// deciderBinary builds the reference decider next to srt-proxy, once.
func deciderBinary(t *testing.T) string {
	t.Helper()
	deciderOnce.Do(func() {
		deciderBin = filepath.Join(filepath.Dir(binary), "decider")
		build := exec.Command("go", "build", "-o", deciderBin, "github.com/srt-sandbox/decider/cmd/decider")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			deciderErr = err
			deciderBin = string(out)
		}
	})
	if deciderErr != nil {
		t.Fatalf("building the decider: %v\n%s", deciderErr, deciderBin)
	}
	return deciderBin
}

// egress is a running decider and srt-proxy.
type egress struct {
	t     *testing.T
	ctl   *control.Conn
	ho    *net.UnixConn
	proxy *proc

	mu         sync.Mutex
	violations []string // "user: line"
	records    []string // srt-proxy's decision lines (-d)
	syncs      chan uint64
	nextQ      uint64
}

// startEgress starts the decider with network and srt-proxy with args (in
// a mount namespace where hosts is its /etc/hosts), and waits for ready.
func startEgress(t *testing.T, network control.Network, hosts string, args ...string) *egress {
	t.Helper()
	decP, proxyD := socketPair(t)
	ctlOurs, ctlDec := socketPair(t)
	hoOurs, hoProxy := socketPair(t)
	ctlConn, err := net.FileConn(ctlOurs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctlConn.Close() })
	e := &egress{t: t, ctl: control.New(ctlConn), syncs: make(chan uint64, 16)}
	if err := e.ctl.Write(&control.Message{T: control.TConfig, Network: &network}); err != nil {
		t.Fatal(err)
	}
	dec := exec.Command(deciderBinary(t), "--proxy-fd", "3", "--control-fd", "4")
	dec.ExtraFiles = []*os.File{decP, ctlDec}
	dec.Stderr = os.Stderr
	if err := dec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dec.Process.Kill(); dec.Wait() })
	e.proxy = spawnWithHosts(t, hosts, append([]string{"--srt-mode", "--decider-fd", "3", "--control-fd", "4", "-d"}, args...),
		[]*os.File{proxyD, hoProxy}, []string{"SRT_PROXY_TOKEN=" + testToken})
	for _, f := range []*os.File{decP, proxyD, ctlDec, hoProxy} {
		f.Close()
	}
	go func() {
		for line := range e.proxy.lines {
			e.mu.Lock()
			e.records = append(e.records, line)
			e.mu.Unlock()
		}
	}()
	go func() {
		for {
			m, err := e.ctl.Read()
			if err != nil {
				return
			}
			switch m.T {
			case control.TViolation:
				e.mu.Lock()
				e.violations = append(e.violations, m.User+": "+m.Line)
				e.mu.Unlock()
			case control.TSync:
				e.syncs <- m.Q
			}
		}
	}()
	e.ho = awaitReady(t, hoOurs)
	return e
}

// hand gives srt-proxy a sandbox's capture and name server sockets.
func (e *egress) hand(id, user string, loopback map[string]string, ns *sandboxNS) {
	e.t.Helper()
	if err := srtlink.Send(e.ho, srtlink.Message{T: "listen", ID: id, Role: srtlink.RoleCapture, User: user, Loopback: loopback}, ns.capture); err != nil {
		e.t.Fatal(err)
	}
	if err := srtlink.Send(e.ho, srtlink.Message{T: "listen", ID: id, Role: srtlink.RoleDNS}, ns.dns); err != nil {
		e.t.Fatal(err)
	}
}

// settle returns the violations recorded so far, once every one of what
// happened before has arrived (a sync through srt-proxy and the decider,
// as srt's egress does), and forgets them.
func (e *egress) settle() []string {
	e.t.Helper()
	e.nextQ++
	b, _ := json.Marshal(map[string]any{"t": "sync", "q": e.nextQ})
	if _, err := e.ho.Write(append(b, '\n')); err != nil {
		e.t.Fatal(err)
	}
	select {
	case q := <-e.syncs:
		if q != e.nextQ {
			e.t.Fatalf("sync %d answered as %d", e.nextQ, q)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("the decider did not answer the sync")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.violations
	e.violations = nil
	return v
}

// control sends a message on the decider's control channel and waits
// until the decider has read it.
func (e *egress) control(m *control.Message) {
	e.t.Helper()
	if err := e.ctl.Write(m); err != nil {
		e.t.Fatal(err)
	}
	e.nextQ++
	if err := e.ctl.Write(&control.Message{T: control.TSync, Q: e.nextQ}); err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-e.syncs:
	case <-time.After(10 * time.Second):
		e.t.Fatal("the decider did not confirm the control message")
	}
}

// record waits for srt-proxy's decision line about host:port that
// contains all of want, and returns it.
func (e *egress) record(hostPort string, want ...string) string {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.mu.Lock()
		for _, line := range e.records {
			if !strings.Contains(line, "kind=capture") || !strings.Contains(line, hostPort) {
				continue
			}
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				e.mu.Unlock()
				return line
			}
		}
		all := strings.Join(e.records, "\n")
		e.mu.Unlock()
		if time.Now().After(deadline) {
			e.t.Fatalf("no capture record for %s with %q; srt-proxy said:\n%s", hostPort, want, all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
