package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/decider/srtlink"
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
	srtMode := hasArg(norm, "--srt-mode")
	every, err := rssEvery()
	if err != nil {
		if srtMode {
			fmt.Fprintln(stderr, srtModeTitle+err.Error())
			return exitUsage
		}
		return usage(usagePrefix + err.Error())
	}
	if every > 0 {
		defer reportRSS(stderr, every)()
	}
	if srtMode {
		return runSRTMode(norm, stderr)
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

// flags are the options as urfave/cli parses them in proxy-only mode
// (normalizeArgs has checked them; their help is options' in args.go).
// The options of srt's mode are among them so that proxy-only mode can
// refuse them by name.
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
		&cli.BoolFlag{Name: "plaintext-inject"},
		&cli.StringFlag{Name: "sigv4-streaming"},
		&cli.StringFlag{Name: "sigv4-presigned"},
		&cli.StringFlag{Name: "sigv4a"},
		&cli.DurationFlag{Name: "verdict-timeout", Value: link.DefaultTimeout},
		&cli.StringFlag{Name: "metrics-listen"},
		&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}},
		&cli.BoolFlag{Name: "srt-mode"},
		&cli.StringFlag{Name: "control-fd"},
		&cli.StringFlag{Name: "parent-http"},
		&cli.StringFlag{Name: "parent-https"},
		&cli.StringFlag{Name: "no-proxy"},
		&cli.BoolFlag{Name: "parent-all"},
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
		&cli.StringFlag{Name: "mitm-socket"},
		&cli.StringSliceFlag{Name: "mitm-domain"},
	}
}

// srtModeOnly are the options of srt's mode that proxy-only mode refuses
// (its policy is fixed, §2.2).
var srtModeOnly = []string{
	"tls-terminate", "tls-ca-cert", "tls-ca-key", "tls-bundle-out", "tls-extra-ca", "tls-exclude",
	"max-tunnels", "handshake-timeout", "refuse-opaque-tunnels", "require-host-match", "ambiguous-target",
	"mitm-socket", "mitm-domain",
}

// runSRTMode serves srt's own mode (srtmode.go) with args, normalized.
func runSRTMode(args []string, stderr io.Writer) int {
	o, err := srtModeOptions(args)
	if err != nil {
		fmt.Fprintln(stderr, srtModeTitle+err.Error())
		return exitUsage
	}
	if o.DeciderFD < 0 {
		err = runRelayOnly(o)
	} else {
		err = runSRT(o)
	}
	// In srt's mode srt-proxy stops when srt does; that is not a failure.
	if err != nil && o.Debug {
		fmt.Fprintf(stderr, srtModeTitle+"stopped (%v)\n", err)
	}
	return exitOK
}

// srtModeOptions reads srt's mode's args (normalized): srtlink's flags,
// which srtlink.ParseProxyFlags checks, and none of proxy-only mode's.
func srtModeOptions(args []string) (srtOptions, error) {
	switch name := proxyOnlyOption(args); name {
	case "":
	case "--metrics-listen":
		// srt's sandbox mode has no metrics: srt never asks for them.
		return srtOptions{}, errors.New("--metrics-listen is an option of proxy-only mode (srt proxy); srt's mode has no metrics")
	default:
		return srtOptions{}, fmt.Errorf("%s is an option of proxy-only mode (srt proxy); srt's mode (--srt-mode) takes no such option", name)
	}
	f, err := srtlink.ParseProxyFlags(args)
	if err != nil {
		return srtOptions{}, err
	}
	return srtOptionsOf(f), nil
}

// proxyOnlyOption is the first of args (normalized) that is an option of
// proxy-only mode alone, or "".
func proxyOnlyOption(args []string) string {
	srtMode := map[string]bool{}
	for _, name := range srtlink.ProxyFlagNames() {
		srtMode[name] = true
	}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if !srtMode[name] {
			return name
		}
	}
	return ""
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
