package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt-proxy/internal/link"
)

// version is srt-proxy's version (srt's).
const version = "0.1.0"

// Exit codes.
const (
	exitOK       = 0 // served and stopped (any reason but a failed start), or --version / --help
	exitStart    = 1 // proxy-only mode could not start: "stopped (start failed: …)"
	exitUsage    = 2 // the command line is wrong
	usagePrefix  = "srt proxy: "
	srtModeTitle = "srt-proxy: "
)

// run is srt-proxy's main: it returns the exit code.
func run(args []string) int {
	return runWith(args, os.Stdout, os.Stderr)
}

func runWith(args []string, stdout, stderr io.Writer) int {
	if wantsVersion(args[1:]) {
		fmt.Fprintln(stdout, "srt-proxy "+version)
		return exitOK
	}
	norm, err := normalizeArgs(args[1:])
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(stderr, ue.msg)
		} else {
			fmt.Fprintln(stderr, usagePrefix+err.Error())
		}
		return exitUsage
	}
	code := exitOK
	app := &cli.App{
		Name:                      "srt-proxy",
		Usage:                     "srt's HTTP egress gate: every request is decided by a decider process",
		UsageText:                 "srt-proxy --decider-fd <fd> (--listen-fd <fd> | --listen <host:port>) [options]",
		HideVersion:               true,
		HideHelpCommand:           true,
		DisableSliceFlagSeparator: true,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		Flags:                     flags(),
		ExitErrHandler:            func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Bool("srt-mode") {
				code = runSRTMode(c, stderr)
				return nil
			}
			o, err := proxyOnlyOptions(c)
			if err != nil {
				fmt.Fprintln(stderr, usagePrefix+err.Error())
				code = exitUsage
				return nil
			}
			code = runProxyOnly(o, stderr)
			return nil
		},
	}
	if err := app.Run(append([]string{args[0]}, norm...)); err != nil {
		fmt.Fprintln(stderr, usagePrefix+err.Error())
		return exitUsage
	}
	return code
}

func flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "listen-fd", Usage: "accept connections on this inherited listening socket (repeatable)"},
		&cli.StringFlag{Name: "listen", Usage: "listen on this loopback `host:port` instead (development)"},
		&cli.BoolFlag{Name: "listen-any-interface", Usage: "let --listen bind a non-loopback address: the listener is unauthenticated and reachable from other hosts"},
		&cli.StringFlag{Name: "decider-fd", Usage: "bidirectional decider stream (a socket) on this `fd`"},
		&cli.StringFlag{Name: "decider-in", Usage: "decider -> proxy stream on this `fd` (with --decider-out)"},
		&cli.StringFlag{Name: "decider-out", Usage: "proxy -> decider stream on this `fd` (with --decider-in)"},
		&cli.StringFlag{Name: "decider-framing", Value: "line", Usage: "`line` (one JSON object per line) or length (the reference's 4-byte length prefix)"},
		&cli.StringFlag{Name: "lifeline-fd", Usage: "shut down when the stream on this `fd` ends"},
		&cli.StringFlag{Name: "ca-fd", Usage: "read the TLS-termination CA (key and certificate PEM) from this `fd`; without it every CONNECT is refused"},
		&cli.StringSliceFlag{Name: "strip-response-header", Usage: "response headers never passed back (`name...`)"},
		&cli.BoolFlag{Name: "plaintext-header-set", Usage: "let allow verdicts set headers on plain-HTTP requests (cleartext)"},
		&cli.DurationFlag{Name: "verdict-timeout", Value: link.DefaultTimeout, Usage: "how long a request waits for its verdict"},
		&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "one decision line per request on stderr"},
		&cli.BoolFlag{Name: "version", Usage: `print "srt-proxy <version>" and exit; every other option is ignored`},
		&cli.BoolFlag{Name: "srt-mode", Usage: "srt's own mode: listeners and stop come over --control-fd (srt starts srt-proxy so); without --decider-fd it only relays"},
		&cli.StringFlag{Name: "control-fd", Usage: "srt's mode: descriptor of srt's control channel"},
		&cli.StringFlag{Name: "parent-http", Usage: "srt's mode: parent proxy `URL` for plain HTTP"},
		&cli.StringFlag{Name: "parent-https", Usage: "srt's mode: parent proxy `URL` for tunnels (default: --parent-http)"},
		&cli.StringFlag{Name: "no-proxy", Usage: "srt's mode: destinations that bypass the parent proxy (NO_PROXY syntax)"},
		&cli.BoolFlag{Name: "tls-terminate", Usage: "srt's mode: terminate allowed CONNECTs (network.tlsTerminate)"},
		&cli.StringFlag{Name: "tls-ca-cert", Usage: "srt's mode: the CA certificate `PATH` (with --tls-ca-key); without both, a CA is made for this run"},
		&cli.StringFlag{Name: "tls-ca-key", Usage: "srt's mode: the CA key `PATH` (with --tls-ca-cert)"},
		&cli.StringFlag{Name: "tls-bundle-out", Usage: "srt's mode: write the sandbox's trust bundle (the CA, the host's roots, --tls-extra-ca) to `PATH`"},
		&cli.StringSliceFlag{Name: "tls-extra-ca", Usage: "srt's mode: also trust the certificates of this PEM `PATH`, upstream and in the bundle (repeatable)"},
		&cli.StringSliceFlag{Name: "tls-exclude", Usage: "srt's mode: tunnel hosts matching this domain `PATTERN` without terminating (repeatable)"},
		&cli.IntFlag{Name: "max-tunnels", Usage: "srt's mode: terminated tunnels open at once (1-65536; default 256)"},
		&cli.DurationFlag{Name: "handshake-timeout", Usage: "srt's mode: bound on a client's TLS handshake (100ms-10m; default 10s)"},
		&cli.BoolFlag{Name: "refuse-opaque-tunnels", Usage: "srt's mode: refuse tunnels that cannot be inspected (CONNECTs not terminated, non-TLS tunnels, SOCKS)"},
		&cli.BoolFlag{Name: "require-host-match", Usage: "srt's mode: 421 when the Host header, TLS server name or authority is not the destination"},
		&cli.StringFlag{Name: "ambiguous-target", Usage: "srt's mode: `refuse`, asSpelled or normalize request-targets whose normalized form differs (also on plain HTTP)"},
	}
}

// srtModeOnly are the options of srt's mode that proxy-only mode refuses
// (its policy is fixed, §2.2).
var srtModeOnly = []string{
	"tls-terminate", "tls-ca-cert", "tls-ca-key", "tls-bundle-out", "tls-extra-ca", "tls-exclude",
	"max-tunnels", "handshake-timeout", "refuse-opaque-tunnels", "require-host-match", "ambiguous-target",
}

// runSRTMode serves srt's own mode (srtmode.go).
func runSRTMode(c *cli.Context, stderr io.Writer) int {
	dec, err1 := fdFlag(c, "decider-fd")
	ctl, err2 := fdFlag(c, "control-fd")
	if err := errors.Join(err1, err2); err != nil || ctl < 0 {
		fmt.Fprintln(stderr, srtModeTitle+"--srt-mode needs --control-fd (and --decider-fd, unless it only relays)")
		return exitUsage
	}
	if dec < 0 {
		// Without a decider srt-proxy only relays to external proxies;
		// an option of its own proxy would be silently dropped.
		for _, name := range append([]string{"parent-http", "parent-https", "no-proxy", "verdict-timeout", "strip-response-header", "plaintext-header-set"}, srtModeOnly...) {
			if c.IsSet(name) {
				fmt.Fprintf(stderr, srtModeTitle+"--%s needs --decider-fd: without a decider srt-proxy only relays\n", name)
				return exitUsage
			}
		}
	}
	o := srtOptions{
		deciderFD: dec, controlFD: ctl,
		parentHTTP: c.String("parent-http"), parentHTTPS: c.String("parent-https"), noProxy: c.String("no-proxy"),
		verdictTimeout: c.Duration("verdict-timeout"), debug: c.Bool("debug"),
	}
	if err := o.readRules(c); err != nil {
		fmt.Fprintln(stderr, srtModeTitle+err.Error())
		return exitUsage
	}
	var err error
	if dec < 0 {
		err = runRelayOnly(o)
	} else {
		err = runSRT(o)
	}
	// In srt's mode srt-proxy stops when srt does; that is not a failure.
	if err != nil && c.Bool("debug") {
		fmt.Fprintf(stderr, srtModeTitle+"stopped (%v)\n", err)
	}
	return exitOK
}

// fdFlag is a descriptor option's value; -1 when it is not given.
func fdFlag(c *cli.Context, name string) (int, error) {
	if !c.IsSet(name) {
		return -1, nil
	}
	return parseFD(name, c.String(name))
}

// parseFD reads a descriptor number: decimal digits, 0 or more.
func parseFD(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || v == "" || v[0] == '+' {
		return 0, fmt.Errorf("--%s needs a descriptor number (got %q)", name, v)
	}
	return n, nil
}

// helloWait is how long srt's mode waits for the decider's hello (srt
// starts the decider itself); proxy-only mode waits for as long as it
// takes, or until it is told to stop.
const helloWait = 30 * time.Second
