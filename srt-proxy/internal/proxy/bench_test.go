package proxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/ask"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/http1"
)

// The benchmarks compare the proxy with a direct loopback connection in
// the same run: tunnel throughput (CONNECT and SOCKS5, both directions)
// and the round trip of a kept-alive plain-HTTP request. The proxy and the
// far end each run in a process of their own (this test binary, started
// as a child), as they do in use:
//
//	CGO_ENABLED=0 go test -run '^$' -bench . -benchtime 2s ./srt-proxy/internal/proxy/

const benchChunk = 1 << 20

// TestMain lets the test binary run as a child process: a proxy, a stream
// server or an HTTP server, which prints its address and serves until its
// stdin closes.
func TestMain(m *testing.M) {
	role := os.Getenv("SRT_PROXY_TEST_CHILD")
	if role == "" {
		os.Exit(m.Run())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(l.Addr())
	switch role {
	case "proxy":
		s := &Server{Asker: allowAsker{}, Dialer: &dial.Dialer{HostAddrs: func() []netip.Addr { return nil }},
			Token: testToken, Logger: zerolog.New(io.Discard)}
		go s.Serve(l)
	case "stream":
		go serveStreams(l)
	case "http":
		go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

type allowAsker struct{}

func (allowAsker) Ask(context.Context, *ask.Request) (ask.Verdict, error) {
	return ask.Verdict{Allow: true}, nil
}
func (allowAsker) Refused(*ask.Request, string) {}

// startChild starts the test binary as a child of the given role and
// returns its address and process id; the child ends with the test.
func startChild(t testing.TB, role string) (string, int) {
	t.Helper()
	return startChildEnv(t, "SRT_PROXY_TEST_CHILD="+role)
}

// startChildEnv starts the test binary with env added to its environment
// (which names its role), reads the address it prints on its first line,
// and returns it with the child's process id; the child ends with the
// test, when its standard input closes.
func startChildEnv(t testing.TB, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

// serveStreams serves one stream per connection: the client sends a
// direction byte and a length; for 'd' the server writes that many bytes,
// for 'u' it reads that many and answers one byte.
func serveStreams(l net.Listener) {
	buf := make([]byte, benchChunk)
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var hdr [9]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			n := int64(binary.BigEndian.Uint64(hdr[1:]))
			if hdr[0] == 'd' {
				for n > 0 {
					k := min(n, int64(len(buf)))
					if _, err := c.Write(buf[:k]); err != nil {
						return
					}
					n -= k
				}
				return
			}
			rbuf := make([]byte, benchChunk)
			for n > 0 {
				k, err := c.Read(rbuf[:min(n, int64(len(rbuf)))])
				if err != nil {
					return
				}
				n -= int64(k)
			}
			c.Write([]byte{1})
		}()
	}
}

// openStream reaches the stream server directly, through a CONNECT or
// through SOCKS5.
func openStream(b testing.TB, how, proxy, target string) net.Conn {
	switch how {
	case "direct":
		c, err := net.Dial("tcp", target)
		if err != nil {
			b.Fatal(err)
		}
		return c
	case "connect":
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n", target, basicAuth("srt", testToken))
		if got := readN(b, c, len(http1.ConnectEstablished)); string(got) != http1.ConnectEstablished {
			b.Fatalf("CONNECT: %q", got)
		}
		return c
	default:
		ap := netip.MustParseAddrPort(target)
		c, reply := socksConnect(b, proxy, "srt", testToken, socksIP(ap.Addr(), int(ap.Port())))
		if reply[len(reply)-9] != 0 {
			b.Fatalf("SOCKS reply % x", reply)
		}
		c.SetDeadline(time.Time{})
		return c
	}
}

func BenchmarkTunnelThroughput(b *testing.B) {
	target, _ := startChild(b, "stream")
	proxy, _ := startChild(b, "proxy")
	buf := make([]byte, benchChunk)
	for _, dir := range []string{"down", "up"} {
		for _, how := range []string{"direct", "connect", "socks"} {
			b.Run(dir+"/"+how, func(b *testing.B) {
				c := openStream(b, how, proxy, target)
				defer c.Close()
				total := int64(b.N) * benchChunk
				var hdr [9]byte
				hdr[0] = dir[0]
				binary.BigEndian.PutUint64(hdr[1:], uint64(total))
				b.SetBytes(benchChunk)
				b.ResetTimer()
				c.Write(hdr[:])
				if dir == "up" {
					for i := 0; i < b.N; i++ {
						if _, err := c.Write(buf); err != nil {
							b.Fatal(err)
						}
					}
					readN(b, c, 1)
					return
				}
				var n int64
				for {
					k, err := c.Read(buf) // large reads: the client is not the bottleneck
					n += int64(k)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if n != total {
					b.Fatalf("read %d of %d", n, total)
				}
			})
		}
	}
}

func BenchmarkKeepAliveLatency(b *testing.B) {
	upstream, _ := startChild(b, "http")
	proxy, proxyPID := startChild(b, "proxy")
	for _, how := range []string{"direct", "proxy"} {
		b.Run(how, func(b *testing.B) {
			target, req := upstream, "GET /x HTTP/1.1\r\nHost: "+upstream+"\r\n\r\n"
			if how == "proxy" {
				target = proxy
				req = "GET http://" + upstream + "/x HTTP/1.1\r\nHost: " + upstream +
					"\r\nProxy-Authorization: " + basicAuth("srt", testToken) + "\r\n\r\n"
			}
			c, err := net.Dial("tcp", target)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			wire := []byte(req)
			do := func() {
				if _, err := c.Write(wire); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			do() // warms the proxy's upstream connection
			cpu0 := cpuNS(proxyPID)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				do()
			}
			if how == "proxy" && cpu0 >= 0 {
				b.ReportMetric(float64(cpuNS(proxyPID)-cpu0)/1000/float64(b.N), "proxy-cpu-µs/op")
			}
		})
	}
}

// TestIdleTunnelsMemory opens 1000 CONNECT tunnels through a proxy process
// of its own and checks the process's resident memory.
func TestIdleTunnelsMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("-short, or the race detector (which multiplies memory use)")
	}
	const tunnels, limitMiB = 1000, 100
	proxy, pid := startChild(t, "proxy")
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	before := rssMiB(t, pid)
	conns := make([]net.Conn, 0, tunnels)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range tunnels {
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\nping", echo.Addr(), basicAuth("srt", testToken))
		if got := readN(t, c, len(http1.ConnectEstablished)+4); string(got) != http1.ConnectEstablished+"ping" {
			t.Fatalf("tunnel: %q", got)
		}
	}
	time.Sleep(200 * time.Millisecond)
	after := rssMiB(t, pid)
	t.Logf("proxy RSS: %.1f MiB idle, %.1f MiB with %d idle tunnels (%.1f KiB per tunnel)",
		before, after, tunnels, (after-before)*1024/tunnels)
	if after > limitMiB {
		t.Errorf("RSS %.1f MiB with %d idle tunnels, limit %d MiB", after, tunnels, limitMiB)
	}
}

// cpuNS is the CPU time (ns) the threads of process pid have run, from
// schedstat; -1 when it cannot be read.
func cpuNS(pid int) int64 {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if len(tasks) == 0 {
		return -1
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += ns
		}
	}
	return sum
}

func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
