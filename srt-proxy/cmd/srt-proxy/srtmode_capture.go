package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt-proxy/internal/capture"
	"github.com/srt-sandbox/srt-proxy/internal/dnsserver"
	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
	"github.com/srt-sandbox/srt-proxy/internal/handoff"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
)

// roles serves the sockets of the sandboxes' network namespaces (handoff
// roles "capture" and "dns"). Every sandbox shares one table of fake
// addresses: a name has the same address in each.
type roles struct {
	srv   *proxy.Server
	table fakeip.Table
	dns   dnsserver.Answerer
}

func newRoles(srv *proxy.Server) *roles {
	r := &roles{srv: srv}
	r.dns.Table = &r.table
	return r
}

// serve serves the files of a "listen" with a role and returns what
// closes them. r is nil when srt-proxy runs without a decider, which
// cannot decide captured connections.
func (r *roles) serve(m handoff.Message, files []*os.File) ([]io.Closer, error) {
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if r == nil {
		return nil, fmt.Errorf("a %q listen, but srt-proxy runs without a decider (only relays)", m.Role)
	}
	var closers []io.Closer
	fail := func(err error) ([]io.Closer, error) {
		for _, c := range closers {
			c.Close()
		}
		return nil, err
	}
	for _, f := range files {
		switch m.Role {
		case handoff.RoleCapture:
			ln, err := net.FileListener(f)
			if err != nil {
				return fail(err)
			}
			closers = append(closers, ln)
			s := &capture.Sandbox{Server: r.srv, Table: &r.table, User: m.User, Loopback: m.Loopback}
			go s.Serve(ln)
		case handoff.RoleDNS:
			typ, err := unix.GetsockoptInt(int(f.Fd()), unix.SOL_SOCKET, unix.SO_TYPE)
			if err != nil {
				return fail(err)
			}
			c, err := r.serveDNS(f, typ)
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
func (r *roles) serveDNS(f *os.File, typ int) (io.Closer, error) {
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
		go r.dns.ServeUDP(udp)
		return udp, nil
	case unix.SOCK_STREAM:
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, err
		}
		go r.dns.ServeTCP(ln)
		return ln, nil
	}
	return nil, fmt.Errorf("a dns socket of type %d, neither UDP nor TCP", typ)
}
