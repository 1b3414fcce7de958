package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/capture"
	"github.com/srt-sandbox/srt-proxy/internal/dnsserver"
	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
)

// roles serves the sockets of the sandboxes' network namespaces (handoff
// roles srtlink.RoleCapture and RoleDNS). Each sandbox has a table of fake
// addresses of its own, made with its first such socket and dropped when
// srt closes the sandbox: a sandbox's lookups cannot move another's addresses to
// other names (by filling a shared table until an address is handed out
// again), nor tell which names another looked up.
type roles struct {
	srv *proxy.Server

	mu        sync.Mutex
	sandboxes map[string]*names
}

// names is one sandbox's fake addresses and the name server answering
// from them.
type names struct {
	table fakeip.Table
	dns   dnsserver.Answerer
}

func newRoles(srv *proxy.Server) *roles {
	return &roles{srv: srv, sandboxes: map[string]*names{}}
}

// namesOf is the sandbox id's table and name server.
func (r *roles) namesOf(id string) *names {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.sandboxes[id]
	if n == nil {
		n = &names{}
		n.dns.Table = &n.table
		r.sandboxes[id] = n
	}
	return n
}

// forget drops a closed sandbox's table.
func (r *roles) forget(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.sandboxes, id)
	r.mu.Unlock()
}

// serve serves the files of a "listen" with a role and returns what
// closes them. r is nil when srt-proxy runs without a decider, which
// cannot decide captured connections.
func (r *roles) serve(m srtlink.Message, files []*os.File) ([]io.Closer, error) {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if r == nil {
		return nil, fmt.Errorf("a %q listen, but srt-proxy runs without a decider (only relays)", m.Role)
	}
	n := r.namesOf(m.ID)
	var closers []io.Closer
	fail := func(err error) ([]io.Closer, error) {
		for _, c := range closers {
			c.Close()
		}
		return nil, err
	}
	for _, f := range files {
		switch m.Role {
		case srtlink.RoleCapture:
			ln, err := net.FileListener(f)
			if err != nil {
				return fail(err)
			}
			closers = append(closers, ln)
			s := &capture.Sandbox{Server: r.srv, Table: &n.table, User: m.User, Loopback: m.Loopback}
			go s.Serve(ln)
		case srtlink.RoleDNS:
			typ, err := unix.GetsockoptInt(int(f.Fd()), unix.SOL_SOCKET, unix.SO_TYPE)
			if err != nil {
				return fail(err)
			}
			c, err := n.serveDNS(f, typ)
			if err != nil {
				return fail(err)
			}
			closers = append(closers, c)
		default:
			return fail(fmt.Errorf("a listen of the unknown role %q", m.Role))
		}
	}
	return closers, nil
}

// serveDNS serves one socket of the name server: a UDP socket or a TCP
// listener.
func (n *names) serveDNS(f *os.File, typ int) (io.Closer, error) {
	switch typ {
	case unix.SOCK_DGRAM:
		pc, err := net.FilePacketConn(f)
		if err != nil {
			return nil, err
		}
		udp, ok := pc.(*net.UDPConn)
		if !ok {
			pc.Close()
			return nil, errors.New("a dns socket that is not UDP")
		}
		go n.dns.ServeUDP(udp)
		return udp, nil
	case unix.SOCK_STREAM:
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, err
		}
		go n.dns.ServeTCP(ln)
		return ln, nil
	}
	return nil, fmt.Errorf("a dns socket of type %d, neither UDP nor TCP", typ)
}
