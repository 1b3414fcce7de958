package mitm

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/netip"
	"time"

	"github.com/srt-sandbox/decider/hostname"
)

const (
	// CacheSize is how many names' leaf certificates a CA keeps.
	CacheSize = 256
	// maxLeafValidity caps a leaf's lifetime (it starts a day in the past).
	maxLeafValidity = 99 * 24 * time.Hour
	// remintAfter: a cached leaf older than this is minted again, so a
	// long-running proxy never serves one close to its end.
	remintAfter = 7 * 24 * time.Hour
	// maxCommonName is the X.520 upper bound of a common name; a longer
	// name is in the SAN only.
	maxCommonName = 64
)

// ErrBadName is a name no leaf certificate is minted for: empty, longer
// than a DNS name, or not printable ASCII.
var ErrBadName = errors.New("mitm: not a name a certificate can carry")

type leaf struct {
	cert   *tls.Certificate
	minted time.Time
}

// Leaf returns the leaf certificate for name: an IP literal (the SAN holds
// the address) or a host name (lower-cased; the SAN holds it as a DNS
// name). Leaves are cached per name (the CacheSize most recently used).
// The chain holds the leaf only: the client trusts the CA itself.
func (c *CA) Leaf(name string) (*tls.Certificate, error) {
	name = hostname.LowerASCII(name)
	if !validName(name) {
		return nil, ErrBadName
	}
	now := c.now()
	if l, ok := c.cached(name, now); ok {
		return l, nil
	}
	c.mint.Lock()
	defer c.mint.Unlock()
	if l, ok := c.cached(name, now); ok { // minted while this call waited
		return l, nil
	}
	cert, err := c.mintLeaf(name, now)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.cache.put(name, leaf{cert: cert, minted: now})
	c.mu.Unlock()
	return cert, nil
}

func (c *CA) cached(name string, now time.Time) (*tls.Certificate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.cache.get(name)
	if !ok || now.Sub(l.minted) > remintAfter || !now.Before(l.cert.Leaf.NotAfter) {
		return nil, false
	}
	return l.cert, true
}

// mintLeaf signs a new leaf for name: ECDSA P-256 (the CA's one leaf key),
// valid from a day ago (or from the CA's notBefore, if later: no leaf is
// older than its issuer) for at most 99 days and never past the CA's
// notAfter, for server authentication only.
func (c *CA) mintLeaf(name string, now time.Time) (*tls.Certificate, error) {
	start := now.Add(-24 * time.Hour)
	if start.Before(c.cert.NotBefore) {
		start = c.cert.NotBefore
	}
	end := start.Add(maxLeafValidity)
	if end.After(c.cert.NotAfter) {
		end = c.cert.NotAfter
	}
	if !now.Before(end) {
		return nil, caErr("the CA certificate expired at %s", c.cert.NotAfter.UTC().Format(time.RFC3339))
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		NotBefore:    start,
		NotAfter:     end,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if len(name) <= maxCommonName {
		tmpl.Subject = pkix.Name{CommonName: name}
	}
	if a, err := netip.ParseAddr(name); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: c.leafKey, Leaf: parsed}, nil
}

// validName accepts 1–253 bytes of printable ASCII without spaces: the
// names a SAN can carry. The caller passes an SNI (which crypto/tls has
// already checked) or a canonical CONNECT host.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
