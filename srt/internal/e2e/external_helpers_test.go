//go:build linux

package e2e

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// extHTTPProxy is an external HTTP proxy on host loopback, as a user of
// network.httpProxyPort runs one: it forwards absolute-form requests and
// tunnels CONNECTs to any destination (the tests only name loopback ones),
// and records what it was asked and whether credentials came with it.
type extHTTPProxy struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startExtHTTPProxy(t *testing.T) *extHTTPProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &extHTTPProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *extHTTPProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *extHTTPProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	auth := "no-auth"
	if req.Header.Get("Proxy-Authorization") != "" {
		auth = "auth=" + req.Header.Get("Proxy-Authorization")
	}
	p.mu.Lock()
	p.seen = append(p.seen, req.Method+" "+req.RequestURI+" "+auth)
	p.mu.Unlock()
	target := req.Host
	if req.Method != http.MethodConnect {
		target = req.URL.Host
		if req.URL.Port() == "" {
			target += ":80"
		}
	}
	up, err := net.Dial("tcp", target)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	if req.Method == http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
	} else {
		req.Header.Del("Proxy-Authorization")
		req.Header.Del("Proxy-Connection")
		req.Header.Set("Connection", "close")
		if err := req.Write(up); err != nil {
			return
		}
	}
	go func() {
		io.Copy(up, br)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(c, up)
}

func (p *extHTTPProxy) requests() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.seen, "\n")
}

// extSOCKS is an external SOCKS5 server on host loopback (RFC 1928, no
// authentication) that records whether the client offered a username and
// password, and the targets asked for, and connects to them.
type extSOCKS struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startExtSOCKS(t *testing.T) *extSOCKS {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &extSOCKS{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *extSOCKS) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *extSOCKS) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil || head[0] != 5 {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if !strings.Contains(string(methods), "\x00") {
		c.Write([]byte{5, 0xff})
		return
	}
	c.Write([]byte{5, 0})
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		a := make([]byte, 4)
		io.ReadFull(br, a)
		host = net.IP(a).String()
	case 3:
		n, _ := br.ReadByte()
		name := make([]byte, n)
		io.ReadFull(br, name)
		host = string(name)
	default:
		return
	}
	pb := make([]byte, 2)
	io.ReadFull(br, pb)
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(pb))))
	s.mu.Lock()
	s.seen = append(s.seen, fmt.Sprintf("userpass=%v %s", strings.Contains(string(methods), "\x02"), target))
	s.mu.Unlock()
	up, err := net.Dial("tcp", target)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	go func() {
		io.Copy(up, br)
		up.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(c, up)
}

func (s *extSOCKS) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}
