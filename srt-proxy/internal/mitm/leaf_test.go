package mitm

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"testing"
	"time"
)

func TestLeaf(t *testing.T) {
	now := time.Now()
	ca, err := newEphemeralCA(func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Certificate())
	for _, tc := range []struct{ name, verify string }{
		{"Example.COM", "example.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"2001:db8::1", "2001:db8::1"},
	} {
		l, err := ca.Leaf(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		c := l.Leaf
		if _, err := c.Verify(x509.VerifyOptions{DNSName: tc.verify, Roots: pool, CurrentTime: now}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if c.Subject.CommonName != tc.verify {
			t.Errorf("%s: CN %q", tc.name, c.Subject.CommonName)
		}
		if k, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
			t.Errorf("%s: key %T", tc.name, c.PublicKey)
		}
		if !c.NotBefore.Equal(now.Add(-24*time.Hour).Truncate(time.Second)) && !c.NotBefore.Equal(ca.Certificate().NotBefore) {
			t.Errorf("%s: notBefore %v", tc.name, c.NotBefore)
		}
		if d := c.NotAfter.Sub(c.NotBefore); d > 99*24*time.Hour {
			t.Errorf("%s: valid for %v", tc.name, d)
		}
		if len(l.Certificate) != 1 {
			t.Errorf("%s: chain of %d", tc.name, len(l.Certificate))
		}
	}
	a, _ := ca.Leaf("a.test")
	b, _ := ca.Leaf("b.test")
	if !a.Leaf.PublicKey.(*ecdsa.PublicKey).Equal(b.Leaf.PublicKey) {
		t.Error("two leaves of one CA have different keys")
	}
	if again, _ := ca.Leaf("A.test"); again != a {
		t.Error("the cached leaf was not reused")
	}
	if _, err := ca.Leaf(""); err != ErrBadName {
		t.Errorf("empty name: %v", err)
	}
	if _, err := ca.Leaf("a b"); err != ErrBadName {
		t.Errorf("name with a space: %v", err)
	}
}

func TestLeafValidityCappedByCA(t *testing.T) {
	ec := ecKey(t)
	end := time.Now().Add(10 * 24 * time.Hour).Truncate(time.Second)
	certPEM, keyPEM := pair(t, ec, func(c *x509.Certificate) { c.NotAfter = end })
	ca, err := NewCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ca.Leaf("x.test")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Leaf.NotAfter.Equal(end) {
		t.Errorf("leaf notAfter %v, want the CA's %v", l.Leaf.NotAfter, end)
	}
	if l.Leaf.NotBefore.Before(ca.Certificate().NotBefore) {
		t.Errorf("leaf starts %v, before its CA (%v)", l.Leaf.NotBefore, ca.Certificate().NotBefore)
	}
}

func TestLeafCacheEvictsLeastRecentlyUsed(t *testing.T) {
	ca, err := NewEphemeralCA()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := ca.Leaf("n0.test")
	for i := 1; i < CacheSize; i++ {
		ca.Leaf(fmt.Sprintf("n%d.test", i))
	}
	ca.Leaf("n0.test") // n0 is now the most recent; n1 the least
	ca.Leaf("new.test")
	if ca.cache.len() != CacheSize {
		t.Fatalf("cache holds %d", ca.cache.len())
	}
	if again, _ := ca.Leaf("n0.test"); again != first {
		t.Error("n0 was evicted though recently used")
	}
	ca.mu.Lock()
	_, ok := ca.cache.get("n1.test")
	ca.mu.Unlock()
	if ok {
		t.Error("n1, the least recently used, is still cached")
	}
}

func TestLeafReminted(t *testing.T) {
	now := time.Now()
	ca, err := newEphemeralCA(func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ca.Leaf("x.test")
	now = now.Add(8 * 24 * time.Hour)
	b, _ := ca.Leaf("x.test")
	if a == b {
		t.Error("a week-old leaf was served again")
	}
}

// TestLeafHandshake serves a minted leaf to a real TLS client that trusts
// only the CA.
func TestLeafHandshake(t *testing.T) {
	ca, err := NewEphemeralCA()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Certificate())
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	go func() {
		s := tls.Server(c2, &tls.Config{GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return ca.Leaf(hi.ServerName)
		}})
		s.Handshake()
	}()
	cl := tls.Client(c1, &tls.Config{ServerName: "api.example.com", RootCAs: pool})
	if err := cl.Handshake(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkLeafCached(b *testing.B) {
	ca, err := NewEphemeralCA()
	if err != nil {
		b.Fatal(err)
	}
	ca.Leaf("example.com")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ca.Leaf("example.com"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLeafMint(b *testing.B) {
	ca, err := NewEphemeralCA()
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if _, err := ca.Leaf(fmt.Sprintf("h%d.example.com", i)); err != nil {
			b.Fatal(err)
		}
	}
}
