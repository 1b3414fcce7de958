//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/backendtest"
	"github.com/srt-sandbox/srt/sandbox"
)

// TestTLSTerminate: under network.tlsTerminate the network proxy starts
// with the first command, which gets the trust bundle srt-proxy wrote; a
// live update cannot change what the proxy read at its start, and says
// so; Close removes the bundle.
func TestTLSTerminate(t *testing.T) {
	cfg := parse(t, `{"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}},"filesystem":{"denyRead":["/tmp"],"allowWrite":[],"denyWrite":[]}}`)
	var warnings strings.Builder
	m := newManager(t, cfg, sandbox.Options{Warnings: &warnings})
	if backendtest.Landlock {
		warnings.Reset() // the backend's announcement
	}
	if m.TrustBundle() != "" {
		t.Error("a trust bundle before the proxy started")
	}
	out, code := run(t, m, `echo "$SSL_CERT_FILE $NODE_EXTRA_CA_CERTS"; grep -c BEGIN "$SSL_CERT_FILE"`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	at := "/dev/srt/trust-bundle.crt" // where bubblewrap binds it
	if backendtest.Landlock {
		at = m.TrustBundle() // no mount: its own path on the host
	}
	if code != 0 || len(lines) != 2 || lines[0] != at+" "+at {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if n, _ := strconv.Atoi(lines[1]); n < 2 {
		t.Errorf("%d certificates in the bundle", n)
	}
	bundle := m.TrustBundle()
	if data, err := os.ReadFile(bundle); err != nil || !strings.HasPrefix(string(data), "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("bundle %s: %v", bundle, err)
	}
	// Lists change live; the start-only settings do not, and a warning says so.
	if err := m.UpdateConfig(parse(t, `{"network":{"allowedDomains":["a.test"],"deniedDomains":[],"tlsTerminate":{}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)); err != nil {
		t.Fatal(err)
	}
	if warnings.Len() != 0 {
		t.Errorf("warned about a live change: %s", warnings.String())
	}
	if err := m.UpdateConfig(parse(t, `{"network":{"allowedDomains":[],"deniedDomains":[],"refuseOpaqueTunnels":true},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)); err != nil {
		t.Fatal(err)
	}
	if want := "the update changes network.tlsTerminate, network.refuseOpaqueTunnels, which the network proxy reads only when it starts"; !strings.Contains(warnings.String(), want) {
		t.Errorf("warnings %q, want %q", warnings.String(), want)
	}
	// The proxy still terminates: later commands still get the bundle.
	if out, _ := run(t, m, `echo "$CURL_CA_BUNDLE"`); out != at+"\n" {
		t.Errorf("after the update: %q", out)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(bundle)); !os.IsNotExist(err) {
		t.Errorf("the bundle's directory outlived Close: %v", err)
	}
}

// TestTLSTerminateBadCA: a CA that cannot be used is ErrInvalidConfig at
// the first command, naming the setting, and nothing is left behind.
func TestTLSTerminateBadCA(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("not a certificate\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "ca.key"), []byte("not a key\n"), 0o600)
	cfg := parse(t, `{"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{"caCertPath":"`+dir+`/ca.crt","caKeyPath":"`+dir+`/ca.key"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
	m := newManager(t, cfg, sandbox.Options{})
	defer m.Close()
	_, err := m.Command(context.Background(), "true")
	if !errors.Is(err, sandbox.ErrInvalidConfig) || !strings.Contains(err.Error(), "network.tlsTerminate: tlsTerminate: the CA certificate PEM holds no CERTIFICATE block") {
		t.Fatalf("Command: %v", err)
	}
	if m.TrustBundle() != "" {
		t.Error("a trust bundle after a failed start")
	}
}
