// Command decider is srt's reference decider: it answers srt-proxy's
// questions with the settings' network rules (decider/engine) over the
// decider protocol (docs/decider-protocol.md).
//
// Run on its own, it serves srt-proxy run alone (proxy-only mode) with the
// network block of a settings file, which it reads again on SIGHUP and when
// the file changes, and logs one line per decision on stderr:
//
//	decider --settings FILE [--proxy-fd N] [--log-format text|json] [-d]
//
// The stream to srt-proxy is its standard input and output, or the socket
// --proxy-fd names. srt starts it too, joined to srt-proxy by a socket pair
// and to srt itself by the control channel (decider/control):
//
//	decider --proxy-fd N --control-fd M [--framing line|length] [-d]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/decider/protocol"
	"github.com/srt-sandbox/decider/srtlink"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// usageError is a problem with the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// run is the decider's main: it returns the exit code. A usage error goes
// to stderr alone: stdout may be the stream to srt-proxy.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := exitOK
	app := &cli.App{
		Name:  "decider",
		Usage: "srt's reference decider: it decides srt-proxy's requests with the network rules of srt's settings",
		UsageText: "decider --settings FILE [--proxy-fd FD] [--log-format text|json] [-d]\n" +
			"decider --proxy-fd FD --control-fd FD [--framing line|length] [-d]   (as srt starts it)",
		Description: "Run on its own, the decider reads the network block of FILE ({\"network\": {…}}, the block of srt's\n" +
			"settings file), serves srt-proxy over its standard input and output (or the socket --proxy-fd names),\n" +
			"reads FILE again on SIGHUP and when it changes, and logs one line per decision on standard error.\n" +
			"See docs/srt-proxy.md.",
		HideHelpCommand: true,
		HideVersion:     true,
		Writer:          stdout,
		ErrWriter:       stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "settings", Usage: "serve srt-proxy run alone with the network block of this settings `FILE`"},
			&cli.StringFlag{Name: "proxy-fd", Usage: "the stream to srt-proxy is the socket on descriptor `FD` (on its own: default standard input and output)"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "on its own: log lines as `text` (\"decider: … key=value\") or json (one object a line)"},
			&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "on its own: also log debug lines; in srt's mode: log one line per decision on stderr"},
			&cli.StringFlag{Name: "control-fd", Usage: "srt's mode: srt's control channel on descriptor `FD`"},
			&cli.StringFlag{Name: "framing", Value: "line", Usage: "srt's mode: decider protocol framing, `line` or length"},
		},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return err },
		ExitErrHandler: func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			var err error
			code, err = start(c, stdin, stdout, stderr)
			return err
		},
	}
	if err := app.Run(args); err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "decider: %s\n", ue.msg)
		} else {
			fmt.Fprintf(stderr, "decider: %v\nRun 'decider --help' for usage.\n", err)
		}
		return exitUsage
	}
	return code
}

// start checks the options and runs the decider in its mode.
func start(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if c.NArg() > 0 {
		return 0, usagef("unexpected argument %q: the decider takes options only", c.Args().First())
	}
	settings, alone := c.String("settings"), c.IsSet("settings")
	switch {
	case alone && c.IsSet("control-fd"):
		return 0, usagef("--settings and --control-fd cannot be used together: with --control-fd srt sends the settings")
	case alone && settings == "":
		return 0, usagef("--settings needs a file")
	case alone && c.IsSet("framing"):
		return 0, usagef("--framing is for srt's mode; on its own the decider speaks line framing, srt-proxy's default --decider-framing")
	case !alone && c.IsSet("log-format"):
		return 0, usagef("--log-format is for the decider on its own (--settings); in srt's mode -d logs on srt's stderr")
	case !alone && !c.IsSet("control-fd") && !c.IsSet("proxy-fd"):
		return 0, usagef("--settings FILE is required (srt starts the decider with --proxy-fd and --control-fd instead)")
	}
	proxyFD, err := fdOption(c, "proxy-fd")
	if err != nil {
		return 0, err
	}
	if !alone {
		return runSRTMode(c, proxyFD, stderr)
	}
	var log = textLogger(stderr, "decider: ")
	switch f := c.String("log-format"); f {
	case "text":
	case "json":
		log = jsonLogger(stderr)
	default:
		return 0, usagef("--log-format must be text or json (got %q)", f)
	}
	log = log.Level(zerologLevel(c.Bool("debug")))
	in, out := stdin, stdout
	if proxyFD >= 0 {
		f := os.NewFile(uintptr(proxyFD), "proxy")
		in, out = f, f
	}
	return runAlone(settings, in, out, log), nil
}

// runSRTMode is the decider srt starts.
func runSRTMode(c *cli.Context, proxyFD int, stderr io.Writer) (int, error) {
	controlFD, err := fdOption(c, "control-fd")
	if err != nil {
		return 0, err
	}
	if proxyFD < 0 || controlFD < 0 {
		return 0, usagef("--proxy-fd and --control-fd are required")
	}
	f, err := protocol.ParseFraming(c.String("framing"))
	if err != nil {
		return 0, usagef("--framing must be line or length (got %q)", c.String("framing"))
	}
	s, err := newSRTMode(proxyFD, controlFD, f, c.Bool("debug"))
	if err != nil {
		return 0, usagef("%v", err)
	}
	if err := s.run(); err != nil {
		switch {
		case errors.Is(err, errSRTGone):
			return exitOK, nil // srt closing its end is how it says stop
		case errors.Is(err, errNoHello):
			return exitStop, nil // srt-proxy says why itself
		}
		fmt.Fprintf(stderr, "decider: stopped (%v)\n", err)
		return exitStop, nil
	}
	return exitOK, nil
}

// fdOption is the descriptor an option names, checked to be open; -1 when
// the option is not given.
func fdOption(c *cli.Context, name string) (int, error) {
	if !c.IsSet(name) {
		return -1, nil
	}
	v := c.String(name)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 || strings.TrimSpace(v) != v {
		return 0, usagef("--%s needs a descriptor number (got %q)", name, v)
	}
	if err := srtlink.Inherited(fd); err != nil {
		return 0, usagef("--%s %d: %v", name, fd, err)
	}
	return fd, nil
}
