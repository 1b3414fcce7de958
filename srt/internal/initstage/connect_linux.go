package initstage

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// ConnectFlag makes the program the ssh ProxyCommand srt provides inside
// the sandbox: `srt-init --srt-connect=v1 HOST PORT` opens an HTTP CONNECT
// tunnel to HOST:PORT through the proxy named by $HTTPS_PROXY (with its
// credentials) and joins it to stdin and stdout. The proxy holds the
// tunnel to the same rules as every other connection.
const ConnectFlag = "--srt-connect=v1"

func connectMain(args []string) int {
	if len(args) != 3 || args[0] != ConnectFlag {
		fmt.Fprintf(os.Stderr, "usage: %s HOST PORT\n", ConnectFlag)
		return 2
	}
	host, port := args[1], args[2]
	target := net.JoinHostPort(host, port)
	proxy := os.Getenv("HTTPS_PROXY")
	if proxy == "" {
		proxy = os.Getenv("https_proxy")
	}
	u, err := url.Parse(proxy)
	if err != nil || u.Host == "" {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: no usable HTTPS_PROXY (%q)\n", target, proxy)
		return 1
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %v\n", target, err)
		return 1
	}
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if u.User != nil {
		pw, _ := u.User.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)) + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %v\n", target, err)
		return 1
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %v\n", target, err)
		return 1
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %v\n", target, err)
			return 1
		}
		if line == "\r\n" || line == "\n" {
			break
		}
	}
	fields := strings.SplitN(strings.TrimRight(status, "\r\n"), " ", 3)
	if len(fields) < 2 || fields[1] != "200" {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %s\n", target, strings.Join(fields[1:], " "))
		return 1
	}
	go func() {
		io.Copy(conn, os.Stdin)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	// Bytes the proxy sent after its answer were buffered by br. The
	// tunnel is over when the far end is done.
	io.Copy(os.Stdout, br)
	return 0
}
