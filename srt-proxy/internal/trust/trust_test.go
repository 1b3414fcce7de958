package trust

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt-proxy/internal/mitm"
)

func TestBundle(t *testing.T) {
	ca, err := mitm.NewEphemeralCA()
	if err != nil {
		t.Fatal(err)
	}
	other, err := mitm.NewEphemeralCA()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, _ := other.KeyPEM()
	mixed := filepath.Join(dir, "mixed.pem")
	// A key, a certificate with headers, the same certificate again.
	os.WriteFile(mixed, append(append(key, other.CertPEM()...), other.CertPEM()...), 0o600)
	keyOnly := filepath.Join(dir, "key.pem")
	os.WriteFile(keyOnly, key, 0o600)
	b, skipped := Bundle(ca.CertPEM(), []string{mixed, keyOnly, filepath.Join(dir, "missing.pem"), mixed})
	if !bytes.HasPrefix(b, ca.CertPEM()) {
		t.Error("the CA is not first")
	}
	if n := bytes.Count(b, []byte("BEGIN CERTIFICATE")); n != 2 {
		t.Errorf("%d certificates, want 2 (each once)", n)
	}
	if bytes.Contains(b, []byte("PRIVATE KEY")) {
		t.Error("a key in the bundle")
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Error(), "no CERTIFICATE block") || !os.IsNotExist(skipped[1]) {
		t.Errorf("skipped %v", skipped)
	}
	if roots := HostRoots(); roots != "" {
		b, _ := Bundle(ca.CertPEM(), []string{roots})
		t.Logf("%d certificates with %s", bytes.Count(b, []byte("BEGIN CERTIFICATE")), roots)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trust-bundle.crt")
	for _, content := range []string{"one", "two"} {
		if err := Write(p, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if string(got) != content || fi.Mode().Perm() != 0o644 {
			t.Errorf("%q mode %v", got, fi.Mode())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := Write(filepath.Join(dir, "no", "such"), nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
