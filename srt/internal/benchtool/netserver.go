//go:build linux

package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-sandbox/srt/internal/benchtool/dnsmsg"
)

// blobChunk is the piece of memory /blob repeats: the download is served
// from memory, never from disk.
const blobChunk = 1 << 20

// httpServer serves /blob (size bytes) and /small (2 bytes) on loopback,
// counting the connections it accepts.
type httpServer struct {
	ln    net.Listener
	srv   *http.Server
	size  int64
	chunk []byte
	conns atomic.Int64
}

func startHTTPServer(size int64) (*httpServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &httpServer{ln: ln, size: size, chunk: make([]byte, blobChunk)}
	for i := range s.chunk {
		s.chunk[i] = byte(i * 7)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/blob", s.blob)
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	})
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: time.Minute,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *httpServer) blob(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(s.size, 10))
	for left := s.size; left > 0; {
		n := min(left, int64(len(s.chunk)))
		if _, err := w.Write(s.chunk[:n]); err != nil {
			return
		}
		left -= n
	}
}

func (s *httpServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *httpServer) close() { s.srv.Close() }

// echoServer echoes what it reads on every connection and holds the
// connection until the peer closes it.
type echoServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startEchoServer() (*echoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &echoServer{ln: ln, conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			e.mu.Lock()
			e.conns[c] = true
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				io.Copy(c, c)
				c.Close()
				e.mu.Lock()
				delete(e.conns, c)
				e.mu.Unlock()
			}()
		}
	}()
	return e, nil
}

func (e *echoServer) port() int { return e.ln.Addr().(*net.TCPAddr).Port }

func (e *echoServer) open() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.conns)
}

func (e *echoServer) close() {
	e.ln.Close()
	e.mu.Lock()
	for c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

// dnsResponder is the capture part's baseline name server on the host: one
// goroutine that reads each UDP query and answers it with one A record
// (dnsmsg.Answer), as srt-proxy's name server serves its UDP socket, but
// with no parsing library, name table or policy.
type dnsResponder struct {
	pc *net.UDPConn
}

func startDNSResponder() (*dnsResponder, error) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	addr := netip.MustParseAddr("198.18.128.1")
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			if r, err := dnsmsg.Answer(buf[:n], addr); err == nil {
				pc.WriteToUDPAddrPort(r, from)
			}
		}
	}()
	return &dnsResponder{pc: pc}, nil
}

func (d *dnsResponder) addr() string { return d.pc.LocalAddr().String() }

func (d *dnsResponder) close() { d.pc.Close() }
