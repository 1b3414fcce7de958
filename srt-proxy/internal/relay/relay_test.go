package relay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer is an external proxy stand-in on 127.0.0.1: it echoes what
// it reads, then closes its write side once the client closed its own.
// conns counts the connections it took, open those it still holds.
func echoServer(t *testing.T) (port int, conns *atomic.Int64) {
	port, conns, _ = echoServerOpen(t)
	return port, conns
}

func echoServerOpen(t *testing.T) (port int, conns, open *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns, open = &atomic.Int64{}, &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			open.Add(1)
			go func() {
				defer open.Add(-1)
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, conns, open
}

// serve starts r on a fresh loopback listener and returns its address.
func serve(t *testing.T, r *Relay) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// localhostV4 resolves localhost to 127.0.0.1 only, so the tests do not
// depend on this machine's /etc/hosts.
func localhostV4(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

func TestRelayCarriesBytesBothWaysAndHalfCloses(t *testing.T) {
	port, _ := echoServer(t)
	r := &Relay{Port: port, Setting: "httpProxyPort", Lookup: localhostV4}
	addr := serve(t, r)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("CONNECT example.test:443 HTTP/1.1\r\n\r\n"), 4096) // ~150 KiB: several splices
	go func() {
		c.Write(msg)
		c.(*net.TCPConn).CloseWrite() // the echo ends only once it sees our end
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes came back as %d bytes", len(msg), len(got))
	}
}

func TestRelayWarnsOnceAndClosesWhenTheProxyIsDown(t *testing.T) {
	// A port nothing listens on: take one and free it.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var mu sync.Mutex
	var warnings []string
	r := &Relay{Port: port, Setting: "socksProxyPort", Lookup: localhostV4, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}}
	addr := serve(t, r)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte{5, 1, 0})
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		// A clean end of stream, not a reset, though the request was
		// never read by anyone.
		n, err := c.Read(make([]byte, 16))
		if n != 0 || err != io.EOF {
			t.Fatalf("connection %d: read %d bytes, %v; want the end of the stream", i, n, err)
		}
		c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 {
		t.Fatalf("warnings: %q, want exactly one", warnings)
	}
	want := "warning: network.socksProxyPort is " + itoa(port) + ", but nothing on this host accepts connections on localhost:" + itoa(port) + " ("
	if !strings.HasPrefix(warnings[0], want) || !strings.Contains(warnings[0], "connection refused") {
		t.Fatalf("warning %q, want it to start %q and say why", warnings[0], want)
	}
}

func TestTargetsAreLoopbackOnly(t *testing.T) {
	cases := []struct {
		name   string
		lookup []string
		err    error
		want   []string
	}{
		{"hosts order kept", []string{"::1", "127.0.0.1"}, nil, []string{"[::1]:8080", "127.0.0.1:8080"}},
		{"non-loopback dropped", []string{"192.0.2.7", "127.0.1.1", "2001:db8::1"}, nil, []string{"127.0.1.1:8080"}},
		{"mapped and repeated", []string{"::ffff:127.0.0.1", "127.0.0.1"}, nil, []string{"127.0.0.1:8080"}},
		{"nothing usable", []string{"10.1.2.3"}, nil, []string{"127.0.0.1:8080", "[::1]:8080"}},
		{"lookup failed", nil, errors.New("no such host"), []string{"127.0.0.1:8080", "[::1]:8080"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Relay{Port: 8080, Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
				if host != "localhost" {
					t.Errorf("looked up %q", host)
				}
				var out []netip.Addr
				for _, s := range c.lookup {
					out = append(out, netip.MustParseAddr(s))
				}
				return out, c.err
			}}
			var got []string
			for _, ap := range r.Targets(context.Background()) {
				got = append(got, ap.String())
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("targets %v, want %v", got, c.want)
			}
		})
	}
}

// The second address is tried when the first refuses, and the dialer is
// never handed anything but loopback.
func TestDialTriesEachTarget(t *testing.T) {
	port, _ := echoServer(t)
	var dialled []string
	r := &Relay{Port: port, Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("203.0.113.9"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}, nil
	}, Dial: func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
		dialled = append(dialled, ap.String())
		if ap.Addr() == netip.MustParseAddr("127.0.0.2") {
			return nil, errors.New("refused")
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", ap.String())
	}}
	c, ap, err := r.dialUpstream()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if ap.String() != "127.0.0.1:"+itoa(port) || strings.Join(dialled, " ") != "127.0.0.2:"+itoa(port)+" 127.0.0.1:"+itoa(port) {
		t.Fatalf("dialled %v, used %v", dialled, ap)
	}
}

// No descriptor outlives its connection, whether the proxy answered,
// refused, or the client went away first. The garbage collector is off
// meanwhile: its finalizers would close a leaked socket and hide the leak.
func TestRelayLeaksNoDescriptors(t *testing.T) {
	if raceEnabled {
		// The pipes the pool drops stay open until a collection, which
		// this test turns off so that no finalizer hides a leak.
		t.Skip("the race detector: sync.Pool drops Go's splice pipes at random")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	port, _, echoOpen := echoServerOpen(t)
	r := &Relay{Port: port, Setting: "httpProxyPort", Lookup: localhostV4}
	addr := serve(t, r)
	down := &Relay{Port: 1, Setting: "socksProxyPort", Lookup: localhostV4, Warn: func(string) {}}
	downAddr := serve(t, down)
	once := func(i int) {
		target := addr
		if i%3 == 2 {
			target = downAddr
		}
		c, err := net.Dial("tcp", target)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if i%3 == 1 {
			return // the client leaves without a word
		}
		c.Write([]byte("ping"))
		c.(*net.TCPConn).CloseWrite()
		io.ReadAll(c)
	}
	const parallel = 10
	settle := func() {
		waitUntil(t, func() bool { return r.Active() == 0 && down.Active() == 0 && echoOpen.Load() == 0 })
	}
	// Warm up (the runtime's poller, the splice pipe pool), then measure.
	for i := 0; i < 3*parallel; i++ {
		once(i)
	}
	settle()
	before := openFDs(t)
	var wg sync.WaitGroup
	for i := 0; i < 600; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			once(i)
		}(i)
		if i%parallel == parallel-1 {
			wg.Wait()
		}
	}
	wg.Wait()
	settle()
	after := openFDs(t)
	// Go keeps the splice pipes (two descriptors each, one per direction
	// in flight) in a pool; allow for those of the busiest moment.
	if slack := 2 * 2 * parallel; after > before+slack {
		t.Fatalf("%d descriptors open before, %d after 600 connections (allowed: %d more)", before, after, slack)
	}
}

// Past MaxConns a connection waits in the backlog: never more than that
// many reach the external proxy at once.
func TestRelayBoundsConnections(t *testing.T) {
	port, conns := echoServer(t)
	r := &Relay{Port: port, Setting: "httpProxyPort", Lookup: localhostV4, MaxConns: 2}
	addr := serve(t, r)
	var clients []net.Conn
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", addr) // completes in the backlog even when not accepted
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	waitUntil(t, func() bool { return conns.Load() == 2 })
	time.Sleep(100 * time.Millisecond)
	if n := conns.Load(); n != 2 || r.Active() != 2 {
		t.Fatalf("%d connections reached the proxy (%d active), want 2", n, r.Active())
	}
	clients[0].Close()
	waitUntil(t, func() bool { return conns.Load() == 3 })
	if r.Active() > 2 {
		t.Fatalf("%d active", r.Active())
	}
	// The last one is still carried once a slot frees.
	clients[1].Close()
	waitUntil(t, func() bool { return conns.Load() == 4 })
	c := clients[3]
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("x"))
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 'x' {
		t.Fatalf("the waiting connection: %q %v", b, err)
	}
}

func waitUntil(t *testing.T, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

func itoa(n int) string { return strconv.Itoa(n) }
