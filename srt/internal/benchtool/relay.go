//go:build linux

package main

import (
	"io"
	"net"
	"sync"
)

// relay is the least a relay can be: each connection accepted on
// 127.0.0.1 is dialled on to target and copied both ways with io.Copy,
// which splices between the two sockets as srt-proxy does. capture runs
// host curl through it, so that the captured download can be set against
// what a second TCP leg costs on this machine, with nothing else in the
// path.
type relay struct {
	ln net.Listener
	wg sync.WaitGroup
}

func startRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{})
				go func() {
					io.Copy(u, c)
					u.(*net.TCPConn).CloseWrite()
					close(done)
				}()
				io.Copy(c, u)
				c.(*net.TCPConn).CloseWrite()
				<-done
			}()
		}
	}()
	return r, nil
}

func (r *relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) close() {
	r.ln.Close()
	r.wg.Wait()
}
