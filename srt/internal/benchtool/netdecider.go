//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/srt-sandbox/decider/control"
	"github.com/srt-sandbox/decider/protocol"
)

// The lists and the questions of the verdict benchmark: every question is
// allowed, by an exact name or a wildcard, as a proxy's CONNECTs would be.
var (
	benchAllowed = []string{
		"example.com", "*.example.org", "api.github.com", "*.githubusercontent.com",
		"registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "proxy.golang.org",
		"127.0.0.1:8080", "*.amazonaws.com",
	}
	benchDenied = []string{"evil.example.org"}
	benchHosts  = []string{
		"example.com", "www.example.org", "api.github.com", "raw.githubusercontent.com",
		"registry.npmjs.org", "pypi.org", "proxy.golang.org", "s3.us-east-1.amazonaws.com",
	}
)

// verdictRate measures allow verdicts per second over dur, with inflight
// requests pipelined, from the reference decider binary (decider != "") or
// from the baseline: an in-process responder that decodes each req with the
// same codec and allows it without consulting any policy.
func verdictRate(decider string, inflight int, dur time.Duration) (float64, error) {
	ours, theirs, err := socketPair()
	if err != nil {
		return 0, err
	}
	defer ours.Close()
	var stop func()
	if decider != "" {
		ctlOurs, ctlTheirs, err := socketPair()
		if err != nil {
			theirs.Close()
			return 0, err
		}
		defer ctlOurs.Close()
		cfg, _ := json.Marshal(&control.Message{T: control.TConfig, Network: &control.Network{AllowedDomains: benchAllowed, DeniedDomains: benchDenied}})
		if _, err := ctlOurs.Write(append(cfg, '\n')); err != nil {
			theirs.Close()
			ctlTheirs.Close()
			return 0, err
		}
		go io.Copy(io.Discard, ctlOurs) // violations, syncs: none expected
		cmd := exec.Command(decider, "--proxy-fd", "3", "--control-fd", "4")
		cmd.ExtraFiles = []*os.File{theirs, ctlTheirs}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		theirs.Close()
		ctlTheirs.Close()
		if err != nil {
			return 0, fmt.Errorf("starting the decider: %w", err)
		}
		stop = func() {
			cmd.Process.Kill()
			cmd.Wait()
		}
	} else {
		go trivialDecider(theirs)
		stop = func() { theirs.Close() }
	}
	defer stop()
	conn, err := net.FileConn(ours)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return drive(conn, inflight, dur)
}

func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs"), nil
}

// drive speaks the protocol as srt-proxy does (line framing, srt.v1) and
// counts verdicts while keeping inflight requests outstanding.
func drive(conn net.Conn, inflight int, dur time.Duration) (float64, error) {
	w := protocol.NewWriter(conn, protocol.Line)
	r := protocol.NewReader(conn, protocol.Line, protocol.MaxFrame)
	hello, _ := protocol.Encode(&protocol.ProxyHello{Ext: []string{protocol.ExtSRTv1}})
	if err := w.Write(hello); err != nil {
		return 0, err
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, err := r.Read()
	if err != nil {
		return 0, fmt.Errorf("decider hello: %w", err)
	}
	m, err := protocol.DecodeDeciderMessage(frame, true)
	if err != nil {
		return 0, fmt.Errorf("decider hello: %w", err)
	}
	if h, ok := m.(*protocol.DeciderHello); !ok || !h.HasExt(protocol.ExtSRTv1) {
		return 0, errors.New("the decider did not accept srt.v1")
	}
	conn.SetReadDeadline(time.Time{})

	slots := make(chan struct{}, inflight)
	var (
		done atomic.Int64
		stop = make(chan struct{})
		wg   sync.WaitGroup
		werr error
	)
	wg.Add(1)
	go func() { // the writer: one req per free slot
		defer wg.Done()
		for id := uint64(1); ; id++ {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			host := benchHosts[int(id)%len(benchHosts)]
			b, err := protocol.Encode(&protocol.Req{
				ID: id, Method: "CONNECT", Host: host, Port: 443, Path: "*",
				Kind: protocol.KindConnect, User: "srt",
			})
			if err == nil {
				err = w.Write(b)
			}
			if err != nil {
				werr = err
				return
			}
		}
	}()
	rerr := make(chan error, 1)
	go func() { // the reader
		for {
			frame, err := r.Read()
			if err != nil {
				rerr <- err
				return
			}
			m, err := protocol.DecodeDeciderMessage(frame, true)
			if err != nil {
				rerr <- err
				return
			}
			if _, ok := m.(*protocol.Allow); !ok {
				rerr <- fmt.Errorf("unexpected %s %T", m.Type(), m)
				return
			}
			done.Add(1)
			<-slots
		}
	}()
	check := func() error {
		select {
		case err := <-rerr:
			return fmt.Errorf("reading verdicts: %w", err)
		default:
			return nil
		}
	}
	time.Sleep(300 * time.Millisecond) // warm-up
	if err := check(); err != nil {
		return 0, err
	}
	c0, t0 := done.Load(), time.Now()
	time.Sleep(dur)
	c1, t1 := done.Load(), time.Now()
	if err := check(); err != nil {
		return 0, err
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		return 0, fmt.Errorf("writing requests: %w", werr)
	}
	if c1 == c0 {
		return 0, errors.New("no verdicts")
	}
	return float64(c1-c0) / t1.Sub(t0).Seconds(), nil
}

// trivialDecider is the baseline: the hello, then an allow for every req,
// decoded and encoded with the same codec, in order, with no policy.
func trivialDecider(f *os.File) {
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return
	}
	defer conn.Close()
	r := protocol.NewReader(conn, protocol.Line, protocol.MaxProxyFrame)
	w := protocol.NewWriter(conn, protocol.Line)
	ext := false
	for {
		frame, err := r.Read()
		if err != nil {
			return
		}
		m, err := protocol.DecodeProxyMessage(frame, true)
		if err != nil {
			return
		}
		var out protocol.Message
		switch m := m.(type) {
		case *protocol.ProxyHello:
			ext = len(m.Ext) > 0
			out = &protocol.DeciderHello{AllowedDomains: benchAllowed, DeniedDomains: benchDenied, Ext: m.Ext}
		case *protocol.Req:
			if !ext {
				return
			}
			out = &protocol.Allow{ID: m.ID}
		default:
			return
		}
		b, err := protocol.Encode(out)
		if err != nil || w.Write(b) != nil {
			return
		}
	}
}
