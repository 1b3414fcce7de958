package captured

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/hostname"
)

// clientHello is the first flight of a Go TLS client asking for
// serverName ("" sends no server name).
func clientHello(t testing.TB, serverName string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, &tls.Config{ServerName: serverName, InsecureSkipVerify: serverName == ""}).Handshake()
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1<<15)
	n, err := b.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

func helloReader(b []byte) *bufio.Reader {
	return bufio.NewReaderSize(bytes.NewReader(b), 5+1<<14)
}

func TestHelloServerName(t *testing.T) {
	hello := clientHello(t, "Echo.Test")
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"a server name, canonical", hello, "echo.test"},
		{"no server name", clientHello(t, ""), ""},
		{"not TLS", []byte("GET / HTTP/1.1\r\n\r\n"), ""},
		{"cut short", hello[:len(hello)/2], ""},
		{"nothing", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			br := helloReader(c.in)
			if got := helloServerName(br); got != c.want {
				t.Errorf("helloServerName = %q, want %q", got, c.want)
			}
			// Nothing was consumed.
			if rest, _ := br.Peek(br.Buffered()); !bytes.Equal(rest, c.in[:len(rest)]) || br.Buffered() != min(len(c.in), br.Size()) && len(c.in) > 0 {
				t.Errorf("the reader holds %d bytes of %d", br.Buffered(), len(c.in))
			}
		})
	}
}

// Any first bytes: no panic, and a name, when there is one, is a
// canonical host name, never an address.
func FuzzHelloServerName(f *testing.F) {
	f.Add(clientHello(f, "echo.test"))
	f.Add(clientHello(f, ""))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		name := helloServerName(helloReader(b))
		if name == "" {
			return
		}
		if c, err := hostname.Canonical(name); err != nil || c != name {
			t.Fatalf("name %q is not canonical", name)
		}
		if _, err := netip.ParseAddr(name); err == nil {
			t.Fatalf("name %q is an address", name)
		}
	})
}
