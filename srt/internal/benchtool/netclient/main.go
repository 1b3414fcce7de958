// Command netclient is the network part's client (benchtool -part network
// builds it at start and runs it inside the sandbox and on the host). It
// speaks raw HTTP/1.1 so that what it times is the network path, not a
// client library.
//
//	netclient get -url http://127.0.0.1:P/small -n 1000 [-proxy-env HTTP_PROXY]
//	    N sequential GETs over one kept-alive connection (through the HTTP
//	    proxy named by the environment variable, with its Basic
//	    credentials, if given); prints one JSON line of per-request times.
//	netclient tunnels -target 127.0.0.1:P -stages 1,1000 -proxy-env HTTPS_PROXY
//	    opens CONNECT tunnels to an echo server (checking each with one
//	    byte) and holds them: at each stage it prints "ready K" and waits
//	    for a line on standard input; after the last stage it closes them
//	    all and exits.
//	netclient conns -target 127.0.0.1:P -n 500 [-proxy-env HTTPS_PROXY]
//	    N sequential new connections to an echo server (or CONNECT tunnels
//	    to it), one byte each way on each; prints one JSON line of
//	    per-connection times, from the dial to the byte's return.
//	netclient dns -server 127.0.0.53:53 -n 2000 -inflight 32 -duration 1s
//	    A queries over UDP for names n<i>.bench.example.com: N one at a
//	    time (latency), then K in flight for the duration (answers per
//	    second); prints one JSON line.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: netclient get|tunnels|conns|dns [flags]"))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	proxyEnv := fs.String("proxy-env", "", "environment variable holding the HTTP proxy URL (with user:password)")
	var err error
	switch os.Args[1] {
	case "get":
		target := fs.String("url", "", "http:// URL to fetch")
		n := fs.Int("n", 1000, "requests to time")
		warm := fs.Int("warmup", 50, "requests before the timed ones (the egress starts on the first connection)")
		tunnel := fs.Bool("connect", false, "through the proxy, open one CONNECT tunnel and send origin-form requests in it")
		hold := fs.Bool("hold", false, `print "warm" after the warm-up and the result after the timed requests, and after each wait for a line on standard input`)
		fs.Parse(os.Args[2:])
		err = get(*target, *n, *warm, *proxyEnv, *tunnel, *hold)
	case "tunnels":
		target := fs.String("target", "", "host:port of the echo server")
		stages := fs.String("stages", "1000", "comma-separated tunnel counts to stop at")
		par := fs.Int("parallel", 16, "tunnels opened at once")
		fs.Parse(os.Args[2:])
		err = tunnels(*target, *stages, *par, *proxyEnv)
	case "conns":
		target := fs.String("target", "", "host:port of the echo server")
		n := fs.Int("n", 500, "connections to time")
		warm := fs.Int("warmup", 20, "connections before the timed ones")
		fs.Parse(os.Args[2:])
		err = conns(*target, *n, *warm, *proxyEnv)
	case "dns":
		server := fs.String("server", "127.0.0.53:53", "the name server's UDP address")
		n := fs.Int("n", 2000, "sequential queries to time")
		warm := fs.Int("warmup", 300, "sequential queries before the timed ones")
		names := fs.Int("names", 256, "distinct names asked in turn")
		inflight := fs.Int("inflight", 32, "queries in flight for the rate")
		dur := fs.Duration("duration", time.Second, "how long the rate is measured")
		fs.Parse(os.Args[2:])
		err = dns(*server, *n, *warm, *names, *inflight, *dur)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "netclient: %v\n", err)
	os.Exit(1)
}

// proxyOf returns the proxy's host:port and its Proxy-Authorization value
// ("" without credentials), from the URL in the environment variable name.
func proxyOf(name string) (addr, auth string, err error) {
	v := os.Getenv(name)
	if v == "" {
		return "", "", fmt.Errorf("$%s is empty", name)
	}
	u, err := url.Parse(v)
	if err != nil {
		return "", "", fmt.Errorf("$%s: %w", name, err)
	}
	if u.Scheme != "http" {
		return "", "", fmt.Errorf("$%s: not an http:// proxy", name)
	}
	addr = u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	if u.User != nil {
		pw, _ := u.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	return addr, auth, nil
}

type result struct {
	N        int     `json:"n"`
	MeanUS   float64 `json:"mean_us"`
	MedianUS float64 `json:"median_us"`
	P90US    float64 `json:"p90_us"`
	P99US    float64 `json:"p99_us"`
	MinUS    float64 `json:"min_us"`
}

// summarize is the distribution of ds (sorted in place).
func summarize(ds []time.Duration) result {
	n := len(ds)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	return result{
		N: n, MeanUS: us(sum / time.Duration(n)), MedianUS: us(ds[n/2]),
		P90US: us(ds[n*9/10]), P99US: us(ds[n*99/100]), MinUS: us(ds[0]),
	}
}

func get(rawURL string, n, warm int, proxyEnv string, tunnel, hold bool) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("bad -url %q", rawURL)
	}
	dial, reqLine, auth := u.Host, u.RequestURI(), ""
	if proxyEnv != "" {
		if dial, auth, err = proxyOf(proxyEnv); err != nil {
			return err
		}
		if !tunnel {
			reqLine = u.String() // absolute form to a proxy
		}
	}
	conn, err := net.Dial("tcp", dial)
	if err != nil {
		return err
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	if proxyEnv != "" && tunnel {
		if err := connect(conn, br, u.Host, auth); err != nil {
			return err
		}
		auth = ""
	}
	var head strings.Builder
	fmt.Fprintf(&head, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: srt-benchtool\r\n", reqLine, u.Host)
	if auth != "" {
		fmt.Fprintf(&head, "Proxy-Authorization: %s\r\n", auth)
	}
	head.WriteString("\r\n")
	msg := []byte(head.String())
	stdin := bufio.NewReader(os.Stdin)
	wait := func(say string) error {
		if !hold {
			return nil
		}
		fmt.Println(say)
		_, err := stdin.ReadString('\n')
		if err == io.EOF {
			err = nil
		}
		return err
	}
	one := func() error {
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %s (X-Deny-Reason %q)", resp.Status, resp.Header.Get("X-Deny-Reason"))
		}
		if resp.Close {
			return errors.New("the connection was not kept alive")
		}
		return nil
	}
	for i := 0; i < warm; i++ {
		if err := one(); err != nil {
			return fmt.Errorf("warm-up request %d: %w", i+1, err)
		}
	}
	if err := wait("warm"); err != nil {
		return err
	}
	ds := make([]time.Duration, n)
	for i := range ds {
		t := time.Now()
		if err := one(); err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		ds[i] = time.Since(t)
	}
	b, _ := json.Marshal(summarize(ds))
	if hold {
		return wait(string(b))
	}
	fmt.Println(string(b))
	return nil
}

// connect asks the proxy on conn for a tunnel to target.
func connect(conn net.Conn, br *bufio.Reader, target, auth string) error {
	var head strings.Builder
	fmt.Fprintf(&head, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target)
	if auth != "" {
		fmt.Fprintf(&head, "Proxy-Authorization: %s\r\n", auth)
	}
	head.WriteString("\r\n")
	if _, err := conn.Write([]byte(head.String())); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("CONNECT: %s", resp.Status)
	}
	return nil
}

func tunnels(target, stageList string, par int, proxyEnv string) error {
	if proxyEnv == "" {
		return errors.New("tunnels needs -proxy-env")
	}
	addr, auth, err := proxyOf(proxyEnv)
	if err != nil {
		return err
	}
	var stages []int
	for _, s := range strings.Split(stageList, ",") {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 || (len(stages) > 0 && k <= stages[len(stages)-1]) {
			return fmt.Errorf("bad -stages %q", stageList)
		}
		stages = append(stages, k)
	}
	open := func() (net.Conn, error) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(c)
		if err := connect(c, br, target, auth); err != nil {
			c.Close()
			return nil, err
		}
		// One byte through the tunnel and back: it reaches the server.
		if _, err := c.Write([]byte{'x'}); err != nil {
			c.Close()
			return nil, err
		}
		b, err := br.ReadByte()
		if err != nil || b != 'x' {
			c.Close()
			return nil, fmt.Errorf("echo through the tunnel: %v", err)
		}
		return c, nil
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	stdin := bufio.NewReader(os.Stdin)
	for _, k := range stages {
		want := k - len(held)
		conns := make([]net.Conn, want)
		errs := make([]error, want)
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(par, 1))
		for i := 0; i < want; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				conns[i], errs[i] = open()
				<-sem
			}(i)
		}
		wg.Wait()
		for i, c := range conns {
			if c != nil {
				held = append(held, c)
			} else if err == nil {
				err = fmt.Errorf("tunnel %d: %w", len(held)+i+1, errs[i])
			}
		}
		if err != nil {
			return err
		}
		fmt.Printf("ready %d\n", len(held))
		if _, err := stdin.ReadString('\n'); err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}
