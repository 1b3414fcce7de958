package mitm

import (
	"bytes"
	"crypto/tls"
	"net"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want Sniffed
	}{
		{"empty", nil, NeedMore},
		{"one byte of TLS", []byte{0x16}, NeedMore},
		{"five bytes", []byte{0x16, 3, 1, 0, 200}, NeedMore},
		{"ClientHello", []byte{0x16, 3, 1, 0, 200, 1}, ClientHello},
		{"TLS 1.0 record", []byte{0x16, 3, 0, 2, 0, 1, 0}, ClientHello},
		{"HTTP", []byte("GET / HTTP/1.1\r\n"), NotTLS},
		{"SSH", []byte("SSH-2.0-x"), NotTLS},
		{"SSLv2 hello", []byte{0x80, 0x2e, 1, 3, 1}, NotTLS},
		{"alert record", []byte{0x15, 3, 1, 0, 2, 2}, NotTLS},
		{"bad version", []byte{0x16, 2}, NotTLS},
		{"version 3.5", []byte{0x16, 3, 5}, NotTLS},
		{"empty record", []byte{0x16, 3, 1, 0, 0, 1}, NotTLS},
		{"oversized record", []byte{0x16, 3, 1, 0x40, 1, 1}, NotTLS},
		{"ServerHello", []byte{0x16, 3, 3, 0, 50, 2}, NotTLS},
	} {
		if got := Sniff(tc.in); got != tc.want {
			t.Errorf("%s: Sniff(% x) = %d, want %d", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestSniffRealHello checks the first bytes crypto/tls sends.
func TestSniffRealHello(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	go func() {
		tls.Client(c1, &tls.Config{ServerName: "x.test"}).Handshake()
		c1.Close()
	}()
	buf := make([]byte, SniffLen)
	n := 0
	for n < len(buf) {
		m, err := c2.Read(buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	if Sniff(buf) != ClientHello {
		t.Errorf("Sniff(% x) is not ClientHello", buf)
	}
}

// FuzzSniff: Sniff never panics, a verdict never changes once given when
// more bytes arrive, and ClientHello needs SniffLen bytes.
func FuzzSniff(f *testing.F) {
	f.Add([]byte{0x16, 3, 1, 0, 200, 1})
	f.Add([]byte("GET /"))
	f.Add([]byte{0x16, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Sniff(b)
		if got == ClientHello && len(b) < SniffLen {
			t.Fatalf("ClientHello from %d bytes", len(b))
		}
		for i := 0; i <= len(b); i++ {
			p := Sniff(b[:i])
			if p != NeedMore && p != got {
				t.Fatalf("prefix %d says %d, whole says %d", i, p, got)
			}
		}
		if got == NeedMore && len(b) >= SniffLen {
			t.Fatalf("NeedMore with %d bytes", len(b))
		}
		if got == ClientHello && !bytes.HasPrefix(b, []byte{0x16, 3}) {
			t.Fatal("ClientHello without a handshake record header")
		}
	})
}
