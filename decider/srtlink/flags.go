package srtlink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/srt-sandbox/decider/policy"
)

// TokenEnv is the environment variable that carries the proxy credential
// from srt to srt-proxy (not a flag: argv is in every process listing).
// srt-proxy unsets it once read.
const TokenEnv = "SRT_PROXY_TOKEN"

// ProxyFlags are srt-proxy's flags in srt's mode (--srt-mode): the
// descriptors srt passes and the settings srt-proxy reads once, when it
// starts. A zero or empty field is a flag left out: srt-proxy's default.
type ProxyFlags struct {
	// DeciderFD is the decider's socket; -1: none, and srt-proxy only
	// relays (every sandbox port is relayed to an external proxy).
	DeciderFD int `json:"deciderFd"`
	// ControlFD is the handoff channel (Message).
	ControlFD int `json:"controlFd"`
	// ParentHTTP, ParentHTTPS and NoProxy are network.parentProxy (or
	// srt's own HTTP_PROXY, HTTPS_PROXY and NO_PROXY).
	ParentHTTP  string `json:"parentHttp,omitempty"`
	ParentHTTPS string `json:"parentHttps,omitempty"`
	NoProxy     string `json:"noProxy,omitempty"`
	// ParentAll sends every destination through the parent proxy,
	// loopback and NoProxy's included: an srt inside another srt's
	// Landlock sandbox, whose parent is the outer srt's proxy, which
	// must judge every request.
	ParentAll bool `json:"parentAll,omitempty"`
	// VerdictTimeout bounds a request's wait for its verdict (0:
	// srt-proxy's default of 5 s).
	VerdictTimeout time.Duration `json:"verdictTimeout,omitempty"`
	Debug          bool          `json:"debug,omitempty"`
	Rules          Rules         `json:"rules"`
	// PlaintextInject lets srt-proxy put masked secrets back into
	// plain-HTTP requests too (credentials.allowPlaintextInject); without
	// it, only into requests inside TLS tunnels it terminates.
	PlaintextInject bool `json:"plaintextInject,omitempty"`
	// SigV4Streaming, SigV4Presigned and SigV4A are credentials.sigv4's
	// streaming, presigned and sigv4a: what srt-proxy does with an AWS
	// request it cannot sign again with the real key: one of SigV4Modes;
	// "" is SigV4Deny.
	SigV4Streaming string `json:"sigv4Streaming,omitempty"`
	SigV4Presigned string `json:"sigv4Presigned,omitempty"`
	SigV4A         string `json:"sigv4a,omitempty"`
	// TLS, when not nil, turns TLS termination on (network.tlsTerminate).
	TLS *TLS `json:"tls,omitempty"`
	// MITM, when not nil, sends the hosts it names to the user's MITM
	// proxy (network.mitmProxy); never with TLS.
	MITM *MITM `json:"mitm,omitempty"`
}

// MITM is network.mitmProxy for srt-proxy: the tunnels (and plain-HTTP
// requests) to a host that one of Domains matches go, once allowed, to
// the HTTP proxy listening on the Unix socket Socket.
type MITM struct {
	// Socket is socketPath, absolute.
	Socket string `json:"socket"`
	// Domains are the domains patterns as written (the allowedDomains
	// grammar without a port); at least one.
	Domains []string `json:"domains"`
}

// MITMExclusive is the refusal of network.mitmProxy with
// network.tlsTerminate: the reference's message.
const MITMExclusive = "network.tlsTerminate and network.mitmProxy are mutually exclusive"

// Rules are the settings' request options (network.refuseOpaqueTunnels,
// requireHostMatch, allowPlaintextHeaderSet, ambiguousRequestTarget,
// stripResponseHeaders).
type Rules struct {
	RefuseOpaqueTunnels bool `json:"refuseOpaqueTunnels,omitempty"`
	RequireHostMatch    bool `json:"requireHostMatch,omitempty"`
	PlaintextHeaderSet  bool `json:"plaintextHeaderSet,omitempty"`
	// AmbiguousTarget is one of AmbiguousTargets; "" when the settings do
	// not name it (then plain-HTTP targets are not checked).
	AmbiguousTarget      string   `json:"ambiguousTarget,omitempty"`
	StripResponseHeaders []string `json:"stripResponseHeaders,omitempty"`
}

// TLS is network.tlsTerminate for srt-proxy. srt holds no key and makes no
// certificate: srt-proxy loads or makes the CA and writes the trust bundle
// where BundleOut says, before it reports ready.
type TLS struct {
	// CACert and CAKey are caCertPath and caKeyPath, absolute; both empty:
	// srt-proxy makes a CA for the run, whose key never leaves it.
	CACert string `json:"caCert,omitempty"`
	CAKey  string `json:"caKey,omitempty"`
	// BundleOut is where srt-proxy writes the sandbox's trust bundle.
	BundleOut string `json:"bundleOut,omitempty"`
	// ExtraCACerts are extraCaCertPaths; Exclude the excludeDomains
	// patterns as written.
	ExtraCACerts []string `json:"extraCaCerts,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	// MaxTunnels is 0 (srt-proxy's default, 256) or MinMaxTunnels to
	// MaxMaxTunnels.
	MaxTunnels int `json:"maxTunnels,omitempty"`
	// HandshakeTimeout is 0 (srt-proxy's default, 10 s) or
	// MinHandshakeTimeout to MaxHandshakeTimeout.
	HandshakeTimeout time.Duration `json:"handshakeTimeout,omitempty"`
}

// The limits of the TLS settings (network.tlsTerminate.maxTunnels and
// handshakeTimeoutMs): srt's settings refuse what is outside them, and
// srt-proxy checks its flags against them again.
const (
	MinMaxTunnels       = 1
	MaxMaxTunnels       = 65536
	MinHandshakeTimeout = 100 * time.Millisecond
	MaxHandshakeTimeout = 10 * time.Minute
)

// The values of --sigv4-streaming, --sigv4-presigned and --sigv4a.
const (
	SigV4Deny        = "deny"        // refuse the request (the default)
	SigV4Passthrough = "passthrough" // forward it as the client signed it
)

// SigV4Modes are the values of the sigv4 flags.
var SigV4Modes = []string{SigV4Deny, SigV4Passthrough}

// AmbiguousTargets are the values of network.ambiguousRequestTarget and
// of --ambiguous-target.
var AmbiguousTargets = []string{"refuse", "asSpelled", "normalize"}

// Args is srt-proxy's command line for f, without the program name.
func (f *ProxyFlags) Args() []string {
	a := []string{"--srt-mode"}
	if f.DeciderFD >= 0 {
		a = append(a, "--decider-fd", strconv.Itoa(f.DeciderFD))
	}
	a = append(a, "--control-fd", strconv.Itoa(f.ControlFD))
	// "--name=value": a value that starts with "-" (a header name may) is
	// still the option's value.
	opt := func(name, v string) {
		if v != "" {
			a = append(a, name+"="+v)
		}
	}
	flag := func(name string, on bool) {
		if on {
			a = append(a, name)
		}
	}
	opt("--parent-http", f.ParentHTTP)
	opt("--parent-https", f.ParentHTTPS)
	opt("--no-proxy", f.NoProxy)
	flag("--parent-all", f.ParentAll)
	if f.VerdictTimeout > 0 {
		opt("--verdict-timeout", f.VerdictTimeout.String())
	}
	flag("-d", f.Debug)
	r := f.Rules
	flag("--refuse-opaque-tunnels", r.RefuseOpaqueTunnels)
	flag("--require-host-match", r.RequireHostMatch)
	flag("--plaintext-header-set", r.PlaintextHeaderSet)
	opt("--ambiguous-target", r.AmbiguousTarget)
	for _, h := range r.StripResponseHeaders {
		opt("--strip-response-header", h)
	}
	flag("--plaintext-inject", f.PlaintextInject)
	opt("--sigv4-streaming", f.SigV4Streaming)
	opt("--sigv4-presigned", f.SigV4Presigned)
	opt("--sigv4a", f.SigV4A)
	if t := f.TLS; t != nil {
		flag("--tls-terminate", true)
		opt("--tls-ca-cert", t.CACert)
		opt("--tls-ca-key", t.CAKey)
		opt("--tls-bundle-out", t.BundleOut)
		for _, p := range t.ExtraCACerts {
			opt("--tls-extra-ca", p)
		}
		for _, p := range t.Exclude {
			opt("--tls-exclude", p)
		}
		if t.MaxTunnels > 0 {
			opt("--max-tunnels", strconv.Itoa(t.MaxTunnels))
		}
		if t.HandshakeTimeout > 0 {
			opt("--handshake-timeout", t.HandshakeTimeout.String())
		}
	}
	if m := f.MITM; m != nil {
		opt("--mitm-socket", m.Socket)
		for _, d := range m.Domains {
			opt("--mitm-domain", d)
		}
	}
	return a
}

// flagSpec is one flag ParseProxyFlags reads.
type flagSpec struct {
	name  string // without "--"
	value bool   // takes a value; false: a switch
}

// proxyFlags are the flags of srt's mode, in Args's order. "-d" is
// "--debug".
var proxyFlags = []flagSpec{
	{"srt-mode", false}, {"decider-fd", true}, {"control-fd", true},
	{"parent-http", true}, {"parent-https", true}, {"no-proxy", true}, {"parent-all", false}, {"verdict-timeout", true},
	{"debug", false},
	{"refuse-opaque-tunnels", false}, {"require-host-match", false}, {"plaintext-header-set", false},
	{"ambiguous-target", true}, {"strip-response-header", true},
	{"plaintext-inject", false}, {"sigv4-streaming", true}, {"sigv4-presigned", true}, {"sigv4a", true},
	{"tls-terminate", false}, {"tls-ca-cert", true}, {"tls-ca-key", true}, {"tls-bundle-out", true},
	{"tls-extra-ca", true}, {"tls-exclude", true}, {"max-tunnels", true}, {"handshake-timeout", true},
	{"mitm-socket", true}, {"mitm-domain", true},
}

// ProxyFlagNames are the flags ParseProxyFlags reads ("--srt-mode", …),
// in Args's order, and "-d".
func ProxyFlagNames() []string {
	names := make([]string, 0, len(proxyFlags)+1)
	for _, s := range proxyFlags {
		names = append(names, "--"+s.name)
	}
	return append(names, "-d")
}

// ownProxyFlags are the flags of srt-proxy's own proxy: without a decider
// srt-proxy only relays, and refuses them rather than drop them.
var ownProxyFlags = []string{
	"parent-http", "parent-https", "no-proxy", "parent-all", "verdict-timeout", "strip-response-header", "plaintext-header-set",
	"tls-terminate", "tls-ca-cert", "tls-ca-key", "tls-bundle-out", "tls-extra-ca", "tls-exclude",
	"max-tunnels", "handshake-timeout", "refuse-opaque-tunnels", "require-host-match", "ambiguous-target",
	"plaintext-inject", "sigv4-streaming", "sigv4-presigned", "sigv4a",
	"mitm-socket", "mitm-domain",
}

// tlsFlags need --tls-terminate.
var tlsFlags = []string{"tls-ca-cert", "tls-ca-key", "tls-bundle-out", "tls-extra-ca", "tls-exclude", "max-tunnels", "handshake-timeout"}

// errNoControl is the refusal of a command line without a usable
// --control-fd (or with a --decider-fd that is not a descriptor).
var errNoControl = errors.New("--srt-mode needs --control-fd (and --decider-fd, unless it only relays)")

// ParseProxyFlags reads srt-proxy's command line in srt's mode (without the
// program name): Args's form, and "--name value" for "--name=value",
// "--debug" for "-d". A flag given twice keeps its last value, but for
// the repeatable --strip-response-header, --tls-extra-ca, --tls-exclude
// and --mitm-domain. It checks the flags as srt's settings are checked, and its
// errors name the flag at fault.
func ParseProxyFlags(args []string) (ProxyFlags, error) {
	given, err := scanFlags(args)
	if err != nil {
		return ProxyFlags{}, err
	}
	if given["srt-mode"] == nil {
		return ProxyFlags{}, errors.New("--srt-mode is missing: these are the flags of srt's mode")
	}
	last := func(name string) string {
		v := given[name]
		if len(v) == 0 {
			return ""
		}
		return v[len(v)-1]
	}
	set := func(name string) bool { return given[name] != nil }
	f := ProxyFlags{DeciderFD: -1}
	if f.ControlFD, err = parseFD(last("control-fd")); err != nil || !set("control-fd") {
		return ProxyFlags{}, errNoControl
	}
	if set("decider-fd") {
		if f.DeciderFD, err = parseFD(last("decider-fd")); err != nil {
			return ProxyFlags{}, errNoControl
		}
	} else {
		// Without a decider srt-proxy only relays; a flag of its own
		// proxy would be silently dropped.
		for _, name := range ownProxyFlags {
			if set(name) {
				return ProxyFlags{}, fmt.Errorf("--%s needs --decider-fd: without a decider srt-proxy only relays", name)
			}
		}
	}
	f.ParentHTTP, f.ParentHTTPS, f.NoProxy = last("parent-http"), last("parent-https"), last("no-proxy")
	if f.ParentAll = set("parent-all"); f.ParentAll && f.ParentHTTP == "" && f.ParentHTTPS == "" {
		return ProxyFlags{}, errors.New("--parent-all needs --parent-http or --parent-https: it sends every destination through that proxy")
	}
	if set("verdict-timeout") {
		if f.VerdictTimeout, err = parseDuration("verdict-timeout", last("verdict-timeout")); err != nil {
			return ProxyFlags{}, err
		}
	}
	f.Debug = set("debug")
	f.Rules = Rules{
		RefuseOpaqueTunnels:  set("refuse-opaque-tunnels"),
		RequireHostMatch:     set("require-host-match"),
		PlaintextHeaderSet:   set("plaintext-header-set"),
		StripResponseHeaders: given["strip-response-header"],
	}
	if set("ambiguous-target") {
		v := last("ambiguous-target")
		if !oneOf(v, AmbiguousTargets) {
			return ProxyFlags{}, fmt.Errorf("--ambiguous-target must be refuse, asSpelled or normalize (got %s)", Quote(v))
		}
		f.Rules.AmbiguousTarget = v
	}
	f.PlaintextInject = set("plaintext-inject")
	for _, s := range []struct {
		name string
		dst  *string
	}{{"sigv4-streaming", &f.SigV4Streaming}, {"sigv4-presigned", &f.SigV4Presigned}, {"sigv4a", &f.SigV4A}} {
		if !set(s.name) {
			continue
		}
		if v := last(s.name); !oneOf(v, SigV4Modes) {
			return ProxyFlags{}, fmt.Errorf("--%s must be deny or passthrough (got %s)", s.name, Quote(v))
		}
		*s.dst = last(s.name)
	}
	if f.MITM, err = parseMITM(given, set("tls-terminate")); err != nil {
		return ProxyFlags{}, err
	}
	if !set("tls-terminate") {
		for _, name := range tlsFlags {
			if set(name) {
				return ProxyFlags{}, fmt.Errorf("--%s needs --tls-terminate", name)
			}
		}
		return f, nil
	}
	t := &TLS{
		CACert: last("tls-ca-cert"), CAKey: last("tls-ca-key"), BundleOut: last("tls-bundle-out"),
		ExtraCACerts: given["tls-extra-ca"], Exclude: given["tls-exclude"],
	}
	if set("max-tunnels") {
		if t.MaxTunnels, err = strconv.Atoi(last("max-tunnels")); err != nil {
			return ProxyFlags{}, fmt.Errorf("--max-tunnels needs a whole number (got %s)", Quote(last("max-tunnels")))
		}
	}
	if set("handshake-timeout") {
		if t.HandshakeTimeout, err = parseDuration("handshake-timeout", last("handshake-timeout")); err != nil {
			return ProxyFlags{}, err
		}
	}
	switch {
	case (t.CACert == "") != (t.CAKey == ""):
		return ProxyFlags{}, errors.New("--tls-ca-cert and --tls-ca-key must be given together")
	case set("max-tunnels") && (t.MaxTunnels < MinMaxTunnels || t.MaxTunnels > MaxMaxTunnels):
		return ProxyFlags{}, fmt.Errorf("--max-tunnels must be %d to %d", MinMaxTunnels, MaxMaxTunnels)
	case set("handshake-timeout") && (t.HandshakeTimeout < MinHandshakeTimeout || t.HandshakeTimeout > MaxHandshakeTimeout):
		return ProxyFlags{}, fmt.Errorf("--handshake-timeout must be %v to %v", MinHandshakeTimeout, MaxHandshakeTimeout)
	}
	f.TLS = t
	return f, nil
}

// parseMITM reads --mitm-socket and --mitm-domain (nil when neither is
// given) and checks them as srt checks network.mitmProxy.
func parseMITM(given map[string][]string, tls bool) (*MITM, error) {
	sockets, domains := given["mitm-socket"], given["mitm-domain"]
	switch {
	case sockets == nil && domains == nil:
		return nil, nil
	case sockets == nil:
		return nil, errors.New("--mitm-domain needs --mitm-socket")
	case domains == nil:
		return nil, errors.New("--mitm-socket needs at least one --mitm-domain")
	case tls:
		return nil, errors.New("--mitm-socket and --tls-terminate: " + MITMExclusive)
	}
	m := &MITM{Socket: sockets[len(sockets)-1], Domains: domains}
	if !strings.HasPrefix(m.Socket, "/") {
		return nil, fmt.Errorf("--mitm-socket needs an absolute path (got %s)", Quote(m.Socket))
	}
	for _, d := range domains {
		if _, err := policy.ParseHostPattern(d); err != nil {
			return nil, fmt.Errorf("--mitm-domain: %v", err)
		}
	}
	return m, nil
}

// scanFlags splits args into the values of each flag, by name (without
// "--"); a switch has one empty value per time it is given.
func scanFlags(args []string) (map[string][]string, error) {
	specs := map[string]flagSpec{}
	for _, s := range proxyFlags {
		specs[s.name] = s
	}
	given := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-d" {
			a = "--debug"
		}
		name, value, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		spec, known := specs[name]
		switch {
		case !strings.HasPrefix(a, "--"):
			return nil, fmt.Errorf("unexpected argument %s", Quote(a))
		case !known:
			return nil, fmt.Errorf("--%s is not a flag of srt's mode", name)
		case !spec.value && inline:
			return nil, fmt.Errorf("--%s takes no value", name)
		case spec.value && !inline:
			if i+1 == len(args) {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		given[name] = append(given[name], value)
	}
	return given, nil
}

// parseFD reads a descriptor number: decimal digits, 0 or more.
func parseFD(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || v == "" || v[0] == '+' {
		return 0, fmt.Errorf("not a descriptor number: %s", Quote(v))
	}
	return n, nil
}

func parseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("--%s needs a duration such as 5s or 500ms (got %s)", name, Quote(v))
	}
	return d, nil
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// Quote quotes s as JavaScript's JSON.stringify does: the reference's
// messages quote flag values so, and srt-proxy's follow them.
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
