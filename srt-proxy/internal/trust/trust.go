// Package trust is what TLS termination trusts, and what it has the
// sandbox trust: the certificates of PEM files (the host's roots,
// tlsTerminate.extraCaCertPaths), read the same way for the upstream legs'
// verification (dial.UpstreamRoots) and for the trust bundle srt binds
// into the sandbox (Bundle, Write).
//
//	host roots file ─┐
//	extraCaCertPaths ┼─▶ CertBlocks ─┬─▶ dial.UpstreamRoots (upstream legs verify against these)
//	                 │               └─▶ Bundle(CA first) ─▶ Write(path) ─▶ srt binds it in
//	MITM CA cert ────┘
package trust

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

// hostRootFiles are where Linux distributions keep the system's roots, in
// the order crypto/x509 looks (its root_linux.go).
var hostRootFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine
}

// HostRoots is the file of this host's roots: $SSL_CERT_FILE when set (as
// crypto/x509 honours it), else the first distribution bundle that exists;
// "" when there is none.
func HostRoots() string {
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		return f
	}
	for _, f := range hostRootFiles {
		if _, err := os.Stat(f); err == nil {
			return f
		}
	}
	return ""
}

// CertBlocks returns the CERTIFICATE blocks of a PEM file, in order; other
// blocks (keys, parameters) are ignored. A file that cannot be read, or
// holds no certificate, is an error naming it.
func CertBlocks(path string) ([]*pem.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*pem.Block
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no CERTIFICATE block", path)
	}
	return out, nil
}

// Bundle is the sandbox's trust bundle: caPEM's certificate first, then
// the CERTIFICATE blocks of each file (the host's roots, then
// extraCaCertPaths), each certificate once and with no PEM headers. A
// file that cannot be read or holds no certificate is skipped, and why is
// in skipped, one error per file, for a debug line (the reference skips
// such files too).
func Bundle(caPEM []byte, files []string) (bundle []byte, skipped []error) {
	var out bytes.Buffer
	seen := map[string]bool{}
	add := func(b *pem.Block) {
		if !seen[string(b.Bytes)] {
			seen[string(b.Bytes)] = true
			pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
		}
	}
	if b, _ := pem.Decode(caPEM); b != nil {
		add(b)
	}
	for _, f := range files {
		blocks, err := CertBlocks(f)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		for _, b := range blocks {
			add(b)
		}
	}
	return out.Bytes(), skipped
}

// Write puts data at path atomically (a temporary file in the same
// directory, then a rename), mode 0644: the bundle holds nothing secret,
// and the sandbox's user reads it.
func Write(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".trust-bundle-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
