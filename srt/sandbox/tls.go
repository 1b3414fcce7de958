//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/settings"
)

// trustFiles are what a sandbox needs of the running egress's TLS
// termination: the trust bundle srt-proxy wrote (host path) and the
// settings' CA files, absolute.
type trustFiles struct {
	dir, bundle   string
	caCert, caKey string
}

// bundleName is the trust bundle's file name in its run directory.
const bundleName = "trust-bundle.crt"

// tlsFlags is network.tlsTerminate as srt-proxy takes it, but for where
// the trust bundle goes (newTrustFiles): the CA's paths made absolute
// (srt-proxy and the plan see the same files). srt makes no certificate
// and reads no key: srt-proxy does, so that srt's own start never pays for
// the crypto packages.
func tlsFlags(t *settings.TLSTerminate) *srtlink.TLS {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	f := &srtlink.TLS{
		CACert: abs(t.CACertPath), CAKey: abs(t.CAKeyPath),
		MaxTunnels: t.MaxTunnels, HandshakeTimeout: time.Duration(t.HandshakeTimeoutMs) * time.Millisecond,
	}
	for _, p := range t.ExtraCACertPaths {
		f.ExtraCACerts = append(f.ExtraCACerts, abs(p))
	}
	for _, p := range t.ExcludeDomains {
		f.Exclude = append(f.Exclude, p.String())
	}
	return f
}

// newTrustFiles makes a fresh run directory of srt's state directory for
// the trust bundle srt-proxy writes under f, and points f.BundleOut at it.
func newTrustFiles(f *srtlink.TLS) (*trustFiles, error) {
	dir, err := placeholders.MakeRunDir()
	if err != nil {
		return nil, fmt.Errorf("tlsTerminate: a directory for the trust bundle: %w", err)
	}
	f.BundleOut = filepath.Join(dir, bundleName)
	return &trustFiles{dir: dir, bundle: f.BundleOut, caCert: f.CACert, caKey: f.CAKey}, nil
}

// readyTrust makes the run directory readable by the sandbox's user once
// srt-proxy wrote the bundle into it (it was made 0700, as every entry of
// the state directory; the state directory itself stays 0700).
func readyTrust(f *trustFiles) {
	os.Chmod(f.dir, 0o755)
}

// warnStartOnly says, on a live update, which start-only settings it
// changes: they keep the values the proxy started with.
func (m *Manager) warnStartOnly(cfg *settings.Config) {
	started := m.net.started.Load()
	if started == nil {
		return // not started: it will start with this config
	}
	if keys := settings.StartOnlyChanges(started, &cfg.Network, settings.ReadByProxy); len(keys) > 0 {
		fmt.Fprintf(m.opts.Warnings, "srt: warning: the update changes %s, which the network proxy reads only when it starts; the running proxy keeps the values it started with (start a new srt, or a new Manager, to change them)\n", strings.Join(keys, ", "))
	}
}

// TrustBundle is the host path of the trust bundle the sandboxes get under
// network.tlsTerminate (the CA srt-proxy signs with, the host's roots and
// extraCaCertPaths), once the network proxy has started with TLS
// termination; "" otherwise. It is removed at Close.
func (m *Manager) TrustBundle() string {
	if f := m.net.trust.Load(); f != nil {
		return f.bundle
	}
	return ""
}
