package mitm

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// CA is a certificate authority that mints leaf certificates for the
// names a TLS-terminated tunnel asks for. It is safe for concurrent use.
type CA struct {
	cert    *x509.Certificate
	certDER []byte
	key     crypto.Signer
	leafKey *ecdsa.PrivateKey // the one key of every leaf this CA mints

	now func() time.Time

	mu    sync.Mutex // guards cache
	cache *lru
	mint  sync.Mutex // one signature at a time; cached lookups do not wait on it
}

// CAError is a CA that cannot be used: a PEM pair that does not parse, a
// key that does not match its certificate, a certificate that is not a CA
// or not valid now. Its text starts "tlsTerminate: ".
type CAError struct{ Reason string }

func (e *CAError) Error() string { return "tlsTerminate: " + e.Reason }

func caErr(format string, a ...any) error { return &CAError{Reason: fmt.Sprintf(format, a...)} }

// EphemeralCN is the subject common name of an ephemeral CA.
const EphemeralCN = "sandbox-runtime ephemeral CA"

// ephemeralValidity is how long an ephemeral CA is valid (it starts a day
// in the past, for clocks that lag).
const ephemeralValidity = 825 * 24 * time.Hour

// NewCA makes a CA from a PEM certificate and its PEM private key. The key
// may be RSA (PKCS #1 or PKCS #8) or ECDSA (SEC 1 or PKCS #8). Each
// argument may hold other PEM blocks as well: the first CERTIFICATE block
// of certPEM and the first private key block of keyPEM are used, so one
// buffer holding both (what --ca-fd carries) can be passed twice.
//
// The certificate must be a CA (basicConstraints CA:TRUE), may sign
// certificates (when it has a key usage at all), must be valid now
// (notBefore not in the future, notAfter not past), and its public key
// must be the key's. Any failure is a *CAError.
func NewCA(certPEM, keyPEM []byte) (*CA, error) {
	return newCA(certPEM, keyPEM, time.Now)
}

func newCA(certPEM, keyPEM []byte, now func() time.Time) (*CA, error) {
	der := firstBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" })
	if der == nil {
		return nil, caErr("the CA certificate PEM holds no CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(der.Bytes)
	if err != nil {
		return nil, caErr("the CA certificate does not parse: %v", err)
	}
	kb := firstBlock(keyPEM, isKeyBlock)
	if kb == nil {
		return nil, caErr("the CA key PEM holds no PRIVATE KEY block")
	}
	key, err := parseKey(kb)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return nil, caErr("the CA key does not match the CA certificate")
	}
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, caErr("the CA certificate is not a CA certificate (basicConstraints CA:TRUE is missing)")
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, caErr("the CA certificate may not sign certificates (its key usage lacks keyCertSign)")
	}
	t := now()
	if cert.NotBefore.After(t) {
		return nil, caErr("the CA certificate is not valid yet (notBefore %s is in the future)", cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if !cert.NotAfter.After(t) {
		return nil, caErr("the CA certificate expired at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return finish(cert, der.Bytes, key, now)
}

// NewEphemeralCA makes a fresh CA for one run: an ECDSA P-256 key, subject
// CN "sandbox-runtime ephemeral CA", valid from a day ago for 825 days.
func NewEphemeralCA() (*CA, error) {
	return newEphemeralCA(time.Now)
}

func newEphemeralCA(now func() time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	start := now().Add(-24 * time.Hour)
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: EphemeralCN},
		NotBefore:             start,
		NotAfter:              start.Add(ephemeralValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true, // it signs leaves only
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return finish(cert, der, key, now)
}

func finish(cert *x509.Certificate, der []byte, key crypto.Signer, now func() time.Time) (*CA, error) {
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, certDER: der, key: key, leafKey: leafKey, now: now, cache: newLRU(CacheSize)}, nil
}

// Certificate returns the CA certificate.
func (c *CA) Certificate() *x509.Certificate { return c.cert }

// CertPEM returns the CA certificate, PEM-encoded: what the sandbox's trust
// bundle holds.
func (c *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.certDER})
}

// KeyPEM returns the CA's private key as a PKCS #8 "PRIVATE KEY" block (to
// hand an ephemeral CA to another process over a pipe).
func (c *CA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// firstBlock returns the first PEM block whose type ok accepts.
func firstBlock(data []byte, ok func(string) bool) *pem.Block {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil
		}
		if ok(b.Type) {
			return b
		}
	}
}

func isKeyBlock(t string) bool {
	switch t {
	case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
		return true
	}
	return false
}

// parseKey parses an RSA or ECDSA private key block.
func parseKey(b *pem.Block) (crypto.Signer, error) {
	if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
		return nil, caErr("the CA key is encrypted; give it unencrypted")
	}
	var key any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, caErr("the CA key does not parse: %v", err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, caErr("the CA key is RSA-%d; use at least 2048 bits", k.N.BitLen())
		}
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	}
	return nil, caErr("the CA key is %T; it must be RSA or ECDSA", key)
}

// randomSerial is a random positive 128-bit serial number.
func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(errors.New("mitm: no randomness: " + err.Error()))
	}
	return n.Add(n, big.NewInt(1))
}
