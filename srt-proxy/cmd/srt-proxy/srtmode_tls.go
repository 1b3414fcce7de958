package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/decide"
	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	tlsterm "github.com/srt-sandbox/srt-proxy/internal/proxy/terminate" // "terminate" is a function of this package
	"github.com/srt-sandbox/srt-proxy/internal/trust"
)

// startError is a start failure of srt's mode; setting names the settings
// key at fault when it is a settings error, which srt reports as one.
type startError struct {
	setting string
	err     error
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// terminate loads or makes the CA, writes the sandbox's trust bundle and
// returns the termination to serve. Every error that the settings caused
// is a *startError for "tlsTerminate", its text starting "tlsTerminate: ".
func terminate(t *srtlink.TLS, log zerolog.Logger) (*tlsterm.Terminate, error) {
	fail := func(format string, a ...any) error {
		return &startError{setting: "tlsTerminate", err: fmt.Errorf("tlsTerminate: "+format, a...)}
	}
	ca, err := loadCA(t)
	if err != nil {
		var ce *mitm.CAError
		if errors.As(err, &ce) {
			return nil, &startError{setting: "tlsTerminate", err: err}
		}
		return nil, fail("%v", err)
	}
	exclude, err := decide.ExcludeHosts(t.Exclude)
	if err != nil {
		return nil, &startError{setting: "tlsTerminate", err: err}
	}
	roots, skipped := dial.UpstreamRoots(t.ExtraCACerts)
	for _, s := range skipped {
		log.Debug().Msgf("tlsTerminate: extraCaCertPaths: skipped %v", s)
	}
	if t.BundleOut != "" {
		files := t.ExtraCACerts
		if host := trust.HostRoots(); host != "" {
			files = append([]string{host}, files...)
		} else {
			log.Debug().Msg("tlsTerminate: this host has no roots file; the trust bundle holds the CA and extraCaCertPaths only")
		}
		bundle, skipped := trust.Bundle(ca.CertPEM(), files)
		for _, s := range skipped {
			log.Debug().Msgf("tlsTerminate: trust bundle: skipped %v", s)
		}
		if err := trust.Write(t.BundleOut, bundle); err != nil {
			return nil, fmt.Errorf("tlsTerminate: writing the trust bundle: %w", err)
		}
	}
	return &tlsterm.Terminate{CA: ca, Roots: roots, TrustFix: "network.tlsTerminate.extraCaCertPaths",
		Exclude: exclude, MaxTunnels: t.MaxTunnels, HandshakeTimeout: t.HandshakeTimeout}, nil
}

// loadCA is the settings' CA (caCertPath and caKeyPath), or one made for
// this run whose key never leaves this process.
func loadCA(t *srtlink.TLS) (*mitm.CA, error) {
	if t.CACert == "" {
		return mitm.NewEphemeralCA()
	}
	cert, err := os.ReadFile(t.CACert)
	if err != nil {
		return nil, fmt.Errorf("caCertPath cannot be read: %w", err)
	}
	key, err := os.ReadFile(t.CAKey)
	if err != nil {
		return nil, fmt.Errorf("caKeyPath cannot be read: %w", err)
	}
	return mitm.NewCA(cert, key)
}
