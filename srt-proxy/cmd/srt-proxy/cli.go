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

// usageHint follows every usage error of proxy-only mode: the help itself
// is printed only when asked for, on stdout.
const usageHint = "Run 'srt-proxy --help' for usage."

// run is srt-proxy's main: it returns the exit code.
func run(args []string) int {
	return runWith(args, os.Stdout, os.Stderr)
}

func runWith(args []string, stdout, stderr io.Writer) int {
	if wantsVersion(args[1:]) {
		fmt.Fprintln(stdout, "srt-proxy "+version)
		return exitOK
	}
	if wantsHelp(args[1:]) {
		printHelp(stdout)
		return exitOK
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, msg)
		fmt.Fprintln(stderr, usageHint)
		return exitUsage
	}
	norm, err := normalizeArgs(args[1:])
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return usage(ue.msg)
		}
		return usage(usagePrefix + err.Error())
	}
	code := exitOK
	app := &cli.App{
		Name:                      "srt-proxy",
		HideVersion:               true,
		HideHelp:                  true, // printHelp answers -h and --help
		DisableSliceFlagSeparator: true,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		Flags:                     flags(),
		ExitErrHandler:            func(*cli.Context, error) {},
		// normalizeArgs refuses what the parser would; should it miss
		// something, the parser's complaint is said without the help text
		// it would print on stdout.
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return err },
		Action: func(c *cli.Context) error {
			if c.Bool("srt-mode") {
				code = runSRTMode(c, stderr)
				return nil
			}
			o, err := proxyOnlyOptions(c)
			if err != nil {
				code = usage(usagePrefix + err.Error())
				return nil
			}
			code = runProxyOnly(o, stderr)
			return nil
		},
	}
	if err := app.Run(append([]string{args[0]}, norm...)); err != nil {
		return usage(usagePrefix + err.Error())
	}
	return code
}

// flags are the options as urfave/cli parses them (normalizeArgs has
// checked them; their help is options' in args.go).
func flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "listen-fd"},
		&cli.StringFlag{Name: "listen"},
		&cli.BoolFlag{Name: "listen-any-interface"},
		&cli.StringFlag{Name: "decider-fd"},
		&cli.StringFlag{Name: "decider-in"},
		&cli.StringFlag{Name: "decider-out"},
		&cli.StringFlag{Name: "decider-framing", Value: "line"},
		&cli.StringFlag{Name: "lifeline-fd"},
		&cli.StringFlag{Name: "ca-fd"},
		&cli.StringSliceFlag{Name: "strip-response-header"},
		&cli.BoolFlag{Name: "plaintext-header-set"},
		&cli.DurationFlag{Name: "verdict-timeout", Value: link.DefaultTimeout},
		&cli.StringFlag{Name: "metrics-listen"},
		&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}},
		&cli.BoolFlag{Name: "srt-mode"},
		&cli.StringFlag{Name: "control-fd"},
		&cli.StringFlag{Name: "parent-http"},
		&cli.StringFlag{Name: "parent-https"},
		&cli.StringFlag{Name: "no-proxy"},
		&cli.BoolFlag{Name: "tls-terminate"},
		&cli.StringFlag{Name: "tls-ca-cert"},
		&cli.StringFlag{Name: "tls-ca-key"},
		&cli.StringFlag{Name: "tls-bundle-out"},
		&cli.StringSliceFlag{Name: "tls-extra-ca"},
		&cli.StringSliceFlag{Name: "tls-exclude"},
		&cli.IntFlag{Name: "max-tunnels"},
		&cli.DurationFlag{Name: "handshake-timeout"},
		&cli.BoolFlag{Name: "refuse-opaque-tunnels"},
		&cli.BoolFlag{Name: "require-host-match"},
		&cli.StringFlag{Name: "ambiguous-target"},
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
	if c.IsSet("metrics-listen") {
		// srt's sandbox mode has no metrics: srt never asks for them.
		fmt.Fprintln(stderr, srtModeTitle+"--metrics-listen is an option of proxy-only mode (srt proxy); srt's mode has no metrics")
		return exitUsage
	}
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
