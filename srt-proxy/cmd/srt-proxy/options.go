package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt-proxy/internal/proxy/rules"
)

// proxyOnlyOpts are the settings of proxy-only mode, from the command line
// and the environment (socket activation).
type proxyOnlyOpts struct {
	listenFDs          []int    // --listen-fd, in order
	activated          []int    // the systemd socket-activation descriptors (LISTEN_FDS)
	listen             hostPort // --listen; "" when not given
	metrics            hostPort // --metrics-listen; "" when not given
	deciderIn          int
	deciderOut         int
	framing            protocol.Framing
	lifelineFD         int // -1: none
	caFD               int // -1: none
	strip              []string
	plaintextHeaderSet bool
	plaintextInject    bool
	// sigv4 are --sigv4-streaming, --sigv4-presigned and --sigv4a.
	sigv4Streaming, sigv4Presigned, sigv4A rules.SigV4Mode
	verdictTimeout                         time.Duration
	debug                                  bool
	warnings                               []string // printed before the proxy starts
}

// proxyOnlyOptions reads and checks proxy-only mode's options, in the
// reference's order: the decider, then where to listen.
func proxyOnlyOptions(c *cli.Context) (*proxyOnlyOpts, error) {
	o := &proxyOnlyOpts{
		plaintextHeaderSet: c.Bool("plaintext-header-set"),
		plaintextInject:    c.Bool("plaintext-inject"),
		verdictTimeout:     c.Duration("verdict-timeout"),
		debug:              c.Bool("debug"),
		strip:              c.StringSlice("strip-response-header"),
	}
	for _, name := range srtModeOnly {
		if c.IsSet(name) {
			return nil, fmt.Errorf("--%s is an option of srt's mode (--srt-mode); proxy-only mode's policy is fixed", name)
		}
	}
	for _, s := range []struct {
		name string
		dst  *rules.SigV4Mode
	}{{"sigv4-streaming", &o.sigv4Streaming}, {"sigv4-presigned", &o.sigv4Presigned}, {"sigv4a", &o.sigv4A}} {
		if !c.IsSet(s.name) {
			continue
		}
		mode, ok := rules.ParseSigV4Mode(c.String(s.name))
		if !ok {
			return nil, fmt.Errorf("--%s must be deny or passthrough (got %s)", s.name, jsonQuote(c.String(s.name)))
		}
		*s.dst = mode
	}
	var err error
	fds := map[string]int{}
	for _, name := range []string{"decider-fd", "decider-in", "decider-out", "lifeline-fd", "ca-fd"} {
		if fds[name], err = fdFlag(c, name); err != nil {
			return nil, err
		}
	}
	for _, v := range c.StringSlice("listen-fd") {
		fd, err := parseFD("listen-fd", v)
		if err != nil {
			return nil, err
		}
		o.listenFDs = append(o.listenFDs, fd)
	}
	o.deciderIn, o.deciderOut = fds["decider-in"], fds["decider-out"]
	if fd := fds["decider-fd"]; fd >= 0 {
		o.deciderIn, o.deciderOut = fd, fd
	}
	if o.deciderIn < 0 || o.deciderOut < 0 {
		return nil, errors.New("a decider is required (--decider-fd, or --decider-in and --decider-out)")
	}
	o.activated = socketActivation()
	anyInterface := c.Bool("listen-any-interface")
	if c.IsSet("listen") {
		if err := o.parseListen("listen", &o.listen, c.String("listen"), anyInterface); err != nil {
			return nil, err
		}
	}
	if len(o.listenFDs) == 0 && len(o.activated) == 0 && o.listen.text == "" {
		return nil, errors.New("--listen-fd (or --listen for development) is required")
	}
	if c.IsSet("metrics-listen") {
		if err := o.parseListen("metrics-listen", &o.metrics, c.String("metrics-listen"), anyInterface); err != nil {
			return nil, err
		}
	}
	if o.framing, err = protocol.ParseFraming(c.String("decider-framing")); err != nil {
		return nil, fmt.Errorf("--decider-framing must be line or length (got %s)", jsonQuote(c.String("decider-framing")))
	}
	if o.verdictTimeout <= 0 {
		return nil, errors.New("--verdict-timeout must be more than 0")
	}
	o.lifelineFD, o.caFD = fds["lifeline-fd"], fds["ca-fd"]
	return o, o.checkFDs()
}

// hostPort is an address to listen on, as given and read.
type hostPort struct {
	text string // as given; "" when none
	host string // without brackets
	port int
}

// parseListen reads --listen <host:port> (or --metrics-listen, name) into
// dst as the reference reads --listen: the port follows the last colon
// (0–65535), the host may be an IPv6 literal in brackets, and a host that
// is not loopback needs --listen-any-interface.
func (o *proxyOnlyOpts) parseListen(name string, dst *hostPort, v string, anyInterface bool) error {
	i := strings.LastIndexByte(v, ':')
	raw, portText := "", v[i+1:]
	if i >= 0 {
		raw = v[:i]
	}
	host := raw
	if len(raw) >= 2 && raw[0] == '[' && raw[len(raw)-1] == ']' {
		host = raw[1 : len(raw)-1]
	}
	port, err := strconv.Atoi(portText)
	if i < 0 || err != nil || strings.Trim(portText, "0123456789") != "" || port > 65535 {
		return fmt.Errorf("--%s needs <host:port> with a port from 0 to 65535 (got %s)", name, jsonQuote(v))
	}
	if !isLoopbackHost(host) {
		if !anyInterface {
			return fmt.Errorf("--%s %s is not a loopback address (127.0.0.0/8, [::1] or localhost); pass --listen-any-interface to bind it anyway", name, jsonQuote(v))
		}
		o.warnings = append(o.warnings, "warning: --listen-any-interface: the listener on "+v+" is reachable from other hosts and is unauthenticated")
	}
	*dst = hostPort{text: v, host: host, port: port}
	return nil
}

var (
	ipv4Text      = regexp.MustCompile(`^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$`)
	ipv6Loopback  = regexp.MustCompile(`^(0{1,4}:){7}0{0,3}1$|^::0{0,3}1$`)
	localhostName = "localhost"
)

// isLoopbackHost reports whether a --listen host can only be reached from
// this machine: localhost (any case), an IPv4 address in 127.0.0.0/8, or
// ::1 spelled out or not.
func isLoopbackHost(host string) bool {
	switch {
	case strings.EqualFold(host, localhostName):
		return true
	case ipv4Text.MatchString(host):
		return strings.HasPrefix(host, "127.")
	}
	return ipv6Loopback.MatchString(host)
}

// checkFDs refuses a descriptor that is not open, or one given for two
// roles (only --decider-in and --decider-out may be one socket).
func (o *proxyOnlyOpts) checkFDs() error {
	type role struct {
		name string
		fd   int
	}
	roles := []role{{"decider-in", o.deciderIn}}
	if o.deciderOut != o.deciderIn {
		roles = append(roles, role{"decider-out", o.deciderOut})
	}
	if o.deciderIn == o.deciderOut {
		roles[0].name = "decider-fd"
	}
	for _, fd := range o.listenFDs {
		roles = append(roles, role{"listen-fd", fd})
	}
	for _, fd := range o.activated {
		roles = append(roles, role{"LISTEN_FDS", fd})
	}
	if o.lifelineFD >= 0 {
		roles = append(roles, role{"lifeline-fd", o.lifelineFD})
	}
	if o.caFD >= 0 {
		roles = append(roles, role{"ca-fd", o.caFD})
	}
	seen := map[int]string{}
	for _, r := range roles {
		if prev, dup := seen[r.fd]; dup {
			return fmt.Errorf("descriptor %d is given twice (%s and %s)", r.fd, flagName(prev), flagName(r.name))
		}
		seen[r.fd] = r.name
		if err := srtlink.Inherited(r.fd); err != nil {
			return fmt.Errorf("%s %d: %v", flagName(r.name), r.fd, err)
		}
	}
	return nil
}

func flagName(role string) string {
	if role == "LISTEN_FDS" {
		return role
	}
	return "--" + role
}

// jsonQuote quotes s as JavaScript's JSON.stringify does (the reference's
// messages quote flag values so).
func jsonQuote(s string) string { return srtlink.Quote(s) }

// socketActivation returns the descriptors systemd passed (3 … 3+N-1)
// when LISTEN_PID names this process and LISTEN_FDS is at least 1, and
// unsets the variables so that nothing started later takes them as its
// own (sd_listen_fds(3)).
func socketActivation() []int {
	pid, err1 := strconv.Atoi(os.Getenv("LISTEN_PID"))
	n, err2 := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if err1 != nil || err2 != nil || pid != os.Getpid() || n < 1 {
		return nil
	}
	for _, v := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		os.Unsetenv(v)
	}
	fds := make([]int, n)
	for i := range fds {
		fds[i] = 3 + i
	}
	return fds
}
