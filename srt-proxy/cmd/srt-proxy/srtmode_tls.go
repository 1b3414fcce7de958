package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt-proxy/internal/dial"
	"github.com/srt-sandbox/srt-proxy/internal/mitm"
	"github.com/srt-sandbox/srt-proxy/internal/proxy"
	"github.com/srt-sandbox/srt-proxy/internal/trust"
)

// tlsOptions are the TLS termination options of srt's mode
// (network.tlsTerminate).
type tlsOptions struct {
	caCert, caKey    string // both or neither; neither: an ephemeral CA
	bundleOut        string // where the sandbox's trust bundle goes; "": none written
	extraCA          []string
	exclude          []string
	maxTunnels       int
	handshakeTimeout time.Duration
}

// Limits of the settings (§3.1), checked again here: srt-proxy does not
// trust its command line more than srt trusts the settings.
const (
	maxMaxTunnels       = 65536
	minHandshakeTimeout = 100 * time.Millisecond
	maxHandshakeTimeout = 10 * time.Minute
)

var targetModes = map[string]proxy.TargetMode{
	"refuse": proxy.TargetRefuse, "asSpelled": proxy.TargetAsSpelled, "normalize": proxy.TargetNormalize,
}

// readRules reads the request options and the TLS options of srt's mode.
func (o *srtOptions) readRules(c *cli.Context) error {
	o.rules = proxy.Rules{
		RefuseOpaqueTunnels:  c.Bool("refuse-opaque-tunnels"),
		RequireHostMatch:     c.Bool("require-host-match"),
		StripResponseHeaders: c.StringSlice("strip-response-header"),
		PlaintextHeaderSet:   c.Bool("plaintext-header-set"),
	}
	if c.IsSet("ambiguous-target") {
		m, ok := targetModes[c.String("ambiguous-target")]
		if !ok {
			return fmt.Errorf("--ambiguous-target must be refuse, asSpelled or normalize (got %s)", jsonQuote(c.String("ambiguous-target")))
		}
		o.rules.AmbiguousTarget, o.rules.CheckPlainTargets = m, true
	}
	if !c.Bool("tls-terminate") {
		for _, name := range []string{"tls-ca-cert", "tls-ca-key", "tls-bundle-out", "tls-extra-ca", "tls-exclude", "max-tunnels", "handshake-timeout"} {
			if c.IsSet(name) {
				return fmt.Errorf("--%s needs --tls-terminate", name)
			}
		}
		return nil
	}
	t := &tlsOptions{
		caCert: c.String("tls-ca-cert"), caKey: c.String("tls-ca-key"), bundleOut: c.String("tls-bundle-out"),
		extraCA: c.StringSlice("tls-extra-ca"), exclude: c.StringSlice("tls-exclude"),
		maxTunnels: c.Int("max-tunnels"), handshakeTimeout: c.Duration("handshake-timeout"),
	}
	switch {
	case (t.caCert == "") != (t.caKey == ""):
		return errors.New("--tls-ca-cert and --tls-ca-key must be given together")
	case c.IsSet("max-tunnels") && (t.maxTunnels < 1 || t.maxTunnels > maxMaxTunnels):
		return fmt.Errorf("--max-tunnels must be 1 to %d", maxMaxTunnels)
	case c.IsSet("handshake-timeout") && (t.handshakeTimeout < minHandshakeTimeout || t.handshakeTimeout > maxHandshakeTimeout):
		return fmt.Errorf("--handshake-timeout must be %v to %v", minHandshakeTimeout, maxHandshakeTimeout)
	}
	o.tls = t
	return nil
}

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
func (t *tlsOptions) terminate(log zerolog.Logger) (*proxy.Terminate, error) {
	fail := func(format string, a ...any) error {
		return &startError{setting: "tlsTerminate", err: fmt.Errorf("tlsTerminate: "+format, a...)}
	}
	ca, err := t.ca()
	if err != nil {
		var ce *mitm.CAError
		if errors.As(err, &ce) {
			return nil, &startError{setting: "tlsTerminate", err: err}
		}
		return nil, fail("%v", err)
	}
	exclude, err := proxy.ExcludeHosts(t.exclude)
	if err != nil {
		return nil, &startError{setting: "tlsTerminate", err: err}
	}
	roots, skipped := dial.UpstreamRoots(t.extraCA)
	for _, s := range skipped {
		log.Debug().Msgf("tlsTerminate: extraCaCertPaths: skipped %v", s)
	}
	if t.bundleOut != "" {
		files := t.extraCA
		if host := trust.HostRoots(); host != "" {
			files = append([]string{host}, files...)
		} else {
			log.Debug().Msg("tlsTerminate: this host has no roots file; the trust bundle holds the CA and extraCaCertPaths only")
		}
		bundle, skipped := trust.Bundle(ca.CertPEM(), files)
		for _, s := range skipped {
			log.Debug().Msgf("tlsTerminate: trust bundle: skipped %v", s)
		}
		if err := trust.Write(t.bundleOut, bundle); err != nil {
			return nil, fmt.Errorf("tlsTerminate: writing the trust bundle: %w", err)
		}
	}
	return &proxy.Terminate{CA: ca, Roots: roots, TrustFix: "network.tlsTerminate.extraCaCertPaths",
		Exclude: exclude, MaxTunnels: t.maxTunnels, HandshakeTimeout: t.handshakeTimeout}, nil
}

// ca is the settings' CA (caCertPath and caKeyPath), or one made for this
// run whose key never leaves this process.
func (t *tlsOptions) ca() (*mitm.CA, error) {
	if t.caCert == "" {
		return mitm.NewEphemeralCA()
	}
	cert, err := os.ReadFile(t.caCert)
	if err != nil {
		return nil, fmt.Errorf("caCertPath cannot be read: %w", err)
	}
	key, err := os.ReadFile(t.caKey)
	if err != nil {
		return nil, fmt.Errorf("caKeyPath cannot be read: %w", err)
	}
	return mitm.NewCA(cert, key)
}
