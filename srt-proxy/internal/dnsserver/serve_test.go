package dnsserver

import (
	"encoding/binary"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/srt-sandbox/srt-proxy/internal/fakeip"
)

// serve runs an Answerer on a UDP socket and a TCP listener of the
// loopback with one port number, as a name server has, and returns both
// addresses.
func serve(t *testing.T, a *Answerer) (udp, tcp string) {
	t.Helper()
	var pc *net.UDPConn
	var ln net.Listener
	for try := 0; ln == nil; try++ {
		var err error
		if pc, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err != nil {
			pc.Close()
			if try == 20 {
				t.Fatalf("no port free for both UDP and TCP: %v", err)
			}
		}
	}
	done := make(chan error, 2)
	go func() { done <- a.ServeUDP(pc) }()
	go func() { done <- a.ServeTCP(ln) }()
	t.Cleanup(func() {
		pc.Close()
		ln.Close()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("serving: %v", err)
			}
		}
	})
	return pc.LocalAddr().String(), ln.Addr().String()
}

// dig runs dig against addr with args and returns its output.
func dig(t *testing.T, addr string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("dig"); err != nil {
		t.Fatal("this test needs dig (bind9-dnsutils; scripts/test installs it)")
	}
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command("dig", append([]string{"@" + host, "-p", port, "+tries=1", "+time=5"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// section returns the records dig printed under ";; <name> SECTION:",
// one per line, fields joined by single spaces.
func section(out, name string) []string {
	var recs []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ";; "+name+" SECTION:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			recs = append(recs, strings.Join(strings.Fields(line), " "))
		}
	}
	return recs
}

func TestDigUDPAndTCP(t *testing.T) {
	tab := &fakeip.Table{}
	udp, tcp := serve(t, &Answerer{Table: tab})
	out := dig(t, udp, "example.com", "A")
	if !strings.Contains(out, "status: NOERROR") || !eq(section(out, "ANSWER"), "example.com. 5 IN A 198.18.128.1") {
		t.Fatalf("dig A over UDP:\n%s", out)
	}
	out = dig(t, tcp, "+tcp", "Example.COM", "AAAA")
	if !strings.Contains(out, "status: NOERROR") || !eq(section(out, "ANSWER"), "Example.COM. 5 IN AAAA fd00:5253:0:1::1") {
		t.Fatalf("dig AAAA over TCP:\n%s", out)
	}
	// Other types: an answer, with no data from anywhere.
	for _, typ := range []string{"TXT", "MX", "SRV", "HTTPS", "NS"} {
		for _, mode := range []string{"+notcp", "+tcp"} {
			addr := udp
			if mode == "+tcp" {
				addr = tcp
			}
			out := dig(t, addr, mode, "example.com", typ)
			if !strings.Contains(out, "status: NOERROR") || !strings.Contains(out, "ANSWER: 0,") {
				t.Errorf("dig %s %s:\n%s", mode, typ, out)
			}
		}
	}
	// Several queries on one TCP connection, answered in order.
	out = dig(t, tcp, "+tcp", "+keepopen", "a.test", "A", "b.test", "AAAA", "localhost", "A")
	if got := section(out, "ANSWER"); !eq(got, "a.test. 5 IN A 198.18.128.2", "b.test. 5 IN AAAA fd00:5253:0:1::3", "localhost. 5 IN A 127.0.0.1") {
		t.Fatalf("dig +keepopen: %q\n%s", got, out)
	}
	// dig's EDNS query, and a name too long for 512 bytes: over UDP the
	// answer is truncated and dig asks again over TCP by itself.
	long := strings.Repeat(strings.Repeat("b", 61)+".", 4) + "com"
	out = dig(t, udp, "+noedns", long, "AAAA")
	if !strings.Contains(out, "Truncated, retrying in TCP mode") {
		t.Errorf("no truncation for a %d-byte name:\n%s", len(long), out)
	}
	if got := section(out, "ANSWER"); !eq(got, long+". 5 IN AAAA fd00:5253:0:1::4") {
		t.Errorf("after the TCP retry: %q\n%s", got, out)
	}
}

func eq(got []string, want ...string) bool {
	return strings.Join(got, "\n") == strings.Join(want, "\n")
}

// TCP: a length beyond the limit closes the connection; so does silence.
func TestTCPLimits(t *testing.T) {
	_, tcp := serve(t, &Answerer{Table: &fakeip.Table{}, idle: 300 * time.Millisecond})
	c, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte{0x10, 0x01}) // 4097 bytes announced
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after an oversized length: read %d, %v; want EOF", n, err)
	}

	c2, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(5 * time.Second))
	q := query(9, "x.test", layers.DNSTypeA, 0)
	msg := binary.BigEndian.AppendUint16(nil, uint16(len(q)))
	c2.Write(append(msg, q...))
	var hdr [2]byte
	if _, err := io.ReadFull(c2, hdr[:]); err != nil {
		t.Fatal(err)
	}
	ans := make([]byte, binary.BigEndian.Uint16(hdr[:]))
	if _, err := io.ReadFull(c2, ans); err != nil {
		t.Fatal(err)
	}
	if r := mustParse(t, ans); r.id != 9 || len(r.answers) != 1 {
		t.Fatalf("answer %+v", r)
	}
	start := time.Now()
	if n, err := c2.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: read %d, %v; want EOF", n, err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
		t.Fatalf("idle connection closed after %v; the limit is 300ms", d)
	}
}

// A UDP datagram longer than any query is answered FORMERR, not cut and
// read.
func TestUDPOversized(t *testing.T) {
	udp, _ := serve(t, &Answerer{Table: &fakeip.Table{}})
	c, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	q := query(11, "x.test", layers.DNSTypeA, 0)
	c.Write(append(q, make([]byte, maxQuery)...))
	b := make([]byte, 2048)
	n, err := c.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if r := mustParse(t, b[:n]); r.id != 11 || r.rcode != rcFormErr || len(r.answers) != 0 {
		t.Fatalf("answer %+v", r)
	}
}
