package initstage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ConnectFlag makes the program the ssh ProxyCommand srt provides inside
// the sandbox: `srt-init --srt-connect=v1 HOST PORT` opens an HTTP CONNECT
// tunnel to HOST:PORT through the proxy named by $HTTPS_PROXY (with its
// credentials, if the URL has any: none when network.httpProxyPort relays
// the port to an external proxy) and joins it to stdin and stdout. The
// proxy holds the tunnel to the same rules as every other connection.
//
// It speaks to the proxy with raw sockets rather than package net: this
// program is also the init stage of every sandbox, and net's set-up would
// slow every start.
const ConnectFlag = "--srt-connect=v1"

func connectMain(args []string) int {
	if len(args) != 3 || args[0] != ConnectFlag {
		fmt.Fprintf(os.Stderr, "usage: %s HOST PORT\n", ConnectFlag)
		return 2
	}
	target := joinHostPort(args[1], args[2])
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "sandbox proxy: %s: %s\n", target, fmt.Sprintf(format, a...))
		return 1
	}
	proxy := os.Getenv("HTTPS_PROXY")
	if proxy == "" {
		proxy = os.Getenv("https_proxy")
	}
	user, addrs, err := parseProxyURL(proxy)
	if err != nil {
		return fail("no usable HTTPS_PROXY (%q): %v", proxy, err)
	}
	fd, err := dialAny(addrs)
	if err != nil {
		return fail("%v", err)
	}
	conn := os.NewFile(uintptr(fd), "proxy")
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if user != "" {
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user)) + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		return fail("%v", err)
	}
	head, rest, err := readHead(conn)
	if errors.Is(err, io.EOF) {
		// What an external proxy that is down looks like through srt's
		// relay (network.httpProxyPort).
		return fail("the proxy closed the connection without answering")
	}
	if err != nil {
		return fail("%v", err)
	}
	status := strings.SplitN(strings.SplitN(head, "\r\n", 2)[0], " ", 3)
	if len(status) < 2 || status[1] != "200" {
		return fail("%s", strings.Join(status[1:], " "))
	}
	go func() {
		io.Copy(conn, os.Stdin)
		unix.Shutdown(fd, unix.SHUT_WR)
	}()
	// The tunnel is over when the far end is done.
	os.Stdout.Write(rest)
	io.Copy(os.Stdout, conn)
	return 0
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + port
}

// parseProxyURL reads http://[user:pass@]host:port: the credentials
// ("user:pass", unescaped) and the addresses to try. Only the loopback
// names the sandbox's proxy variables use are resolved.
func parseProxyURL(s string) (userinfo string, addrs []netip.AddrPort, err error) {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		return "", nil, errors.New("not an http:// URL")
	}
	rest, _, _ = strings.Cut(rest, "/")
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo, rest = unescape(rest[:at]), rest[at+1:]
	}
	host, portText := rest, "80"
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, portText = rest[:i], rest[i+1:]
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return "", nil, errors.New("bad port")
	}
	host = strings.Trim(host, "[]")
	switch host {
	case "localhost":
		addrs = []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port))}
	default:
		a, err := netip.ParseAddr(host)
		if err != nil {
			return "", nil, errors.New("the proxy host must be localhost or an IP address")
		}
		addrs = []netip.AddrPort{netip.AddrPortFrom(a, uint16(port))}
	}
	return userinfo, addrs, nil
}

// unescape undoes percent-encoding.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func dialAny(addrs []netip.AddrPort) (int, error) {
	var last error
	for _, ap := range addrs {
		family := unix.AF_INET
		var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
		if ap.Addr().Is6() {
			family = unix.AF_INET6
			sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
		}
		fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			last = err
			continue
		}
		if err := unix.Connect(fd, sa); err != nil {
			unix.Close(fd)
			last = err
			continue
		}
		return fd, nil
	}
	return -1, last
}

// readHead reads the proxy's answer up to the blank line; rest is what
// came after it.
func readHead(r io.Reader) (head string, rest []byte, err error) {
	var buf []byte
	b := make([]byte, 4096)
	for len(buf) < 64<<10 {
		n, err := r.Read(b)
		buf = append(buf, b[:n]...)
		if i := strings.Index(string(buf), "\r\n\r\n"); i >= 0 {
			return string(buf[:i]), buf[i+4:], nil
		}
		if err != nil {
			return "", nil, err
		}
	}
	return "", nil, errors.New("the proxy's answer is too long")
}
