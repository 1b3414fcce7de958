package mitm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"
)

// pair makes a self-signed certificate for key, adjusted by edit, and
// returns the certificate and key PEM.
func pair(t *testing.T, key crypto.Signer, edit func(*x509.Certificate)) (certPEM, keyPEM []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(7),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	if edit != nil {
		edit(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

var rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewCAAccepts(t *testing.T) {
	ec := ecKey(t)
	ecCert, ecPKCS8 := pair(t, ec, nil)
	sec1, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	rsaCert, rsaPKCS8 := pair(t, rsaKey(), nil)
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey())})
	both := append(append([]byte("junk before\n"), rsaPKCS8...), rsaCert...)
	for _, tc := range []struct {
		name      string
		cert, key []byte
	}{
		{"ecdsa pkcs8", ecCert, ecPKCS8},
		{"ecdsa sec1", ecCert, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})},
		{"rsa pkcs8", rsaCert, rsaPKCS8},
		{"rsa pkcs1", rsaCert, pkcs1},
		{"one buffer with both, key first", both, both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ca, err := NewCA(tc.cert, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ca.Leaf("example.com"); err != nil {
				t.Fatal(err)
			}
			again, err := NewCA(ca.CertPEM(), mustKeyPEM(t, ca))
			if err != nil {
				t.Fatalf("round trip through CertPEM/KeyPEM: %v", err)
			}
			if !again.Certificate().Equal(ca.Certificate()) {
				t.Error("round trip changed the certificate")
			}
		})
	}
}

func mustKeyPEM(t *testing.T, ca *CA) []byte {
	t.Helper()
	b, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewCARefuses(t *testing.T) {
	ec := ecKey(t)
	good, goodKey := pair(t, ec, nil)
	_, otherKey := pair(t, ecKey(t), nil)
	future, futureKey := pair(t, ec, func(c *x509.Certificate) { c.NotBefore = time.Now().Add(time.Hour) })
	expired, expiredKey := pair(t, ec, func(c *x509.Certificate) {
		c.NotBefore, c.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	})
	notCA, notCAKey := pair(t, ec, func(c *x509.Certificate) { c.IsCA = false })
	noSign, noSignKey := pair(t, ec, func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageDigitalSignature })
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	edCert, edKey := pair(t, edPriv, nil)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallCert, smallKey := pair(t, small, nil)
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	for _, tc := range []struct {
		name      string
		cert, key []byte
		want      string
	}{
		{"no certificate", goodKey, goodKey, "holds no CERTIFICATE block"},
		{"no key", good, good, "holds no PRIVATE KEY block"},
		{"garbage certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}), goodKey, "does not parse"},
		{"key of another certificate", good, otherKey, "does not match"},
		{"notBefore in the future", future, futureKey, "is not valid yet"},
		{"expired", expired, expiredKey, "expired"},
		{"not a CA", notCA, notCAKey, "not a CA certificate"},
		{"may not sign", noSign, noSignKey, "lacks keyCertSign"},
		{"ed25519", edCert, edKey, "must be RSA or ECDSA"},
		{"rsa-1024", smallCert, smallKey, "at least 2048 bits"},
		{"encrypted key", good, encrypted, "is encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCA(tc.cert, tc.key)
			var ce *CAError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *CAError", err)
			}
			if !strings.HasPrefix(err.Error(), "tlsTerminate: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want the prefix tlsTerminate: and %q", err, tc.want)
			}
		})
	}
}

func TestEphemeralCA(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ca, err := newEphemeralCA(func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	c := ca.Certificate()
	if c.Subject.CommonName != "sandbox-runtime ephemeral CA" || !c.IsCA {
		t.Errorf("subject %q, IsCA %v", c.Subject.CommonName, c.IsCA)
	}
	if _, ok := c.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("key %T, want ECDSA", c.PublicKey)
	}
	if !c.NotBefore.Equal(now.Add(-24*time.Hour)) || !c.NotAfter.Equal(now.Add(-24*time.Hour).Add(825*24*time.Hour)) {
		t.Errorf("validity %v … %v", c.NotBefore, c.NotAfter)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
}
