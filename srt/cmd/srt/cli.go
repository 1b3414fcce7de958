//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/internal/version"
	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// Exit codes of srt's own failures (docs/cli.md). Otherwise srt exits with
// the command's status, or 128+N when the command was killed by signal N.
const (
	exitFailure = 1 // bad flags, bad settings, missing dependency, sandbox cannot be built
)

// usageError is a problem with the command line. It is said on stderr
// with a hint to --help, never with the help itself: stdout is the
// command's alone (under an .mcp.json it is the JSON-RPC stream).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// onUsageError turns the flag parser's complaint into a usageError; left
// to itself, the parser prints the whole help text on stdout.
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usageError{err.Error()}
}

func newApp(stdout, stderr io.Writer, status *int, sigs *signals) *cli.App {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version and exit"}
	// The bare version, as the reference prints its own.
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, c.App.Version) }
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show this help and exit"}
	return &cli.App{
		Name:      "srt",
		Usage:     "run a command in a sandbox that limits what it may read, write and reach",
		UsageText: "srt [flags] [--] command [args…]\nsrt [flags] -c 'shell command'",
		Description: "Flags are read only before the command: `srt ls -la` runs `ls -la`.\n" +
			"Settings come from ~/.srt-settings.json (see docs/settings.md).",
		Version:         version.Version,
		HideHelpCommand: true,
		Writer:          stdout,
		ErrWriter:       stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "settings", Aliases: []string{"s"}, Usage: "settings file `PATH` (default ~/.srt-settings.json)"},
			&cli.StringFlag{Name: "c", Usage: "run `COMMAND` with the sandbox's shell (bash -c); command arguments are then ignored"},
			&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "print debug lines on stderr (same as SRT_DEBUG=1)"},
			&cli.StringFlag{Name: "control-fd", Usage: "read live config updates, one complete settings object per line, from descriptor `FD` (>= 3)"},
			&cli.StringSliceFlag{Name: "pass-fd", Usage: "give the command descriptor `FD` (3 to 8) at the same number; repeatable"},
			&cli.StringFlag{Name: "violations-fd", Usage: "write every violation as a JSON line to descriptor `FD` (>= 3)"},
			&cli.BoolFlag{Name: "show-violations", Usage: "append the command's <sandbox_violations> block to stderr when it exits"},
			&cli.StringFlag{Name: "backend", Usage: "the sandbox `BACKEND`: auto (bubblewrap where user namespaces can be made, else landlock), bubblewrap or landlock (weaker: no namespaces); overrides the settings' backend"},
			&cli.StringSliceFlag{Name: "allow-weaker", Usage: "let the Landlock backend run without `NAME` (truncate, network, device-ioctl, signals: where the kernel lacks it; root: run as uid 0); repeatable, or comma-separated"},
			&cli.BoolFlag{Name: "report-filesystem-violations", Usage: "record the writes the filesystem rules refuse and the opens of paths they hide as violations (costs each write a round trip)"},
		},
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Action: func(ctx *cli.Context) error {
			code, err := runCommand(ctx, stderr, sigs)
			*status = code
			return err
		},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 && args[1] == "proxy" {
		return runProxy(args[2:], stdout, stderr)
	}
	sigs := watchSignals()
	status := 0
	app := newApp(stdout, stderr, &status, sigs)
	if err := app.Run(args); err != nil {
		var ue usageError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "srt: %s\nRun 'srt --help' for usage.\n", ue.msg)
		default:
			printError(stderr, err)
		}
		return exitFailure
	}
	return status
}

// printError prints one of srt's own failures.
func printError(stderr io.Writer, err error) {
	var fe *settings.FileError
	if errors.As(err, &fe) {
		fmt.Fprintf(stderr, "srt: %s\n%s\n", fe.Error(), fe.Refusal)
		return
	}
	fmt.Fprintf(stderr, "srt: %v\n", err)
}

// logger is the library's logger: debug lines on stderr, or nothing.
func logger(debug bool, stderr io.Writer) *slog.Logger {
	if !debug {
		return slog.New(slog.DiscardHandler)
	}
	return newDebugLogger(stderr)
}

// signals are the signals srt forwards to the command. From the start of a
// run, a signal must not kill srt before the sandbox is cleaned up.
type signals struct {
	ch    chan os.Signal
	ready chan struct{} // closed once they are caught
}

// watchSignals starts catching the forwarded signals. Registering takes
// about a millisecond (a thread start, then one hand-over to that thread
// per signal), so it runs beside the flag parsing and the planning and is
// waited for just before the sandbox starts. (No signal.Stop: srt exits
// when the run ends.)
func watchSignals() *signals {
	s := &signals{ch: make(chan os.Signal, 8), ready: make(chan struct{})}
	go func() {
		signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
		close(s.ready)
	}()
	return s
}

func runCommand(ctx *cli.Context, stderr io.Writer, signals *signals) (int, error) {
	sigs := signals.ch
	if ctx.Bool("debug") {
		os.Setenv("SRT_DEBUG", "1")
	}
	log := logger(os.Getenv("SRT_DEBUG") != "", stderr)

	command, err := commandOf(ctx, stderr)
	if err != nil {
		return exitFailure, err
	}

	path, explicit, err := settingsPath(ctx)
	if err != nil {
		return exitFailure, err
	}
	cfg, found, err := loadSettings(path, explicit)
	if err != nil {
		return exitFailure, err
	}
	if !found {
		log.Debug(fmt.Sprintf("No config found at %s, using default config", path))
	}

	if err := applyBackendFlags(ctx, cfg); err != nil {
		return exitFailure, usageError{err.Error()}
	}

	var ctlFD int
	var ctlFile *os.File
	if ctx.IsSet("control-fd") {
		if ctlFD, err = parseControlFD(ctx.String("control-fd")); err != nil {
			return exitFailure, err
		}
		if ctlFile, err = openControlFD(ctlFD); err != nil {
			return exitFailure, err
		}
	}
	var vout *violationsOut
	if ctx.IsSet("violations-fd") {
		if vout, err = openViolationsFD(ctx.String("violations-fd")); err != nil {
			return exitFailure, err
		}
	}
	taken := map[int]string{}
	if ctlFile != nil {
		taken[ctlFD] = "--control-fd"
	}
	if vout != nil {
		taken[vout.fd] = "--violations-fd"
	}
	passOpts, err := passFDs(ctx.StringSlice("pass-fd"), taken)
	if err != nil {
		return exitFailure, err
	}
	opts := sandbox.Options{Logger: log, Warnings: stderr, Debug: os.Getenv("SRT_DEBUG") != "", SettingsFiles: []string{path},
		ReportFilesystemViolations: ctx.Bool("report-filesystem-violations")}
	if vout != nil {
		opts.OnViolation = vout.write
	}
	m, err := sandbox.New(cfg, opts)
	if err != nil {
		return exitFailure, err
	}
	// Last (defers run in reverse): the network proxy stops and the trust
	// bundle's directory goes.
	defer m.Close()
	var copts []sandbox.CommandOption
	if ctlFile != nil {
		copts = append(copts, sandbox.WithNullDescriptor(ctlFD))
	}
	copts = append(copts, passOpts...)
	cmd, err := m.Command(context.Background(), command, copts...)
	if err != nil {
		// A setting that failed once put to use (a tlsTerminate CA that
		// cannot be used) is reported as the file's other errors are.
		var ie *settings.InvalidError
		if errors.As(err, &ie) && found {
			err = &settings.FileError{Path: path, Refusal: settings.RefuseBroken, Err: ie}
		}
		return exitFailure, err
	}
	// The command's stdio are srt's own, handed over as they are.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if ctx.Bool("show-violations") || vout != nil {
		defer func() {
			m.SyncViolations()
			if ctx.Bool("show-violations") {
				if block := sandbox.Annotate("", m.Violations().ForKey(command)); block != "" {
					fmt.Fprintln(stderr, block[1:])
				}
			}
		}()
	}
	defer func() {
		if err := cmd.Release(); err != nil {
			fmt.Fprintf(stderr, "srt: cleaning up: %v\n", err)
		}
	}()
	<-signals.ready
	if s := pending(sigs); s != nil {
		return 128 + int(s.(syscall.Signal)), fmt.Errorf("interrupted by %s before the command started", signalName(s))
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, sandbox.ErrStdioFile) {
			return exitFailure, err
		}
		return exitFailure, fmt.Errorf("cannot start bubblewrap: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var ctlFailed chan error
	if ctlFile != nil {
		cr := &controlReader{n: ctlFD, f: ctlFile, m: m, stderr: stderr}
		cr.run()
		ctlFailed = cr.failed
	}
	for {
		select {
		case s := <-sigs:
			cmd.Signal(s)
			continue
		case err := <-ctlFailed:
			// No update ever arrived: the command must not run without the
			// channel it asked for. SIGTERM, then SIGKILL after 2 s.
			cmd.Signal(syscall.SIGTERM)
			select {
			case <-cmd.Done():
			case <-time.After(2 * time.Second):
				cmd.Signal(syscall.SIGKILL)
				<-cmd.Done()
			}
			return exitFailure, err
		case <-cmd.Done():
			// The init stage reported the status after ending every process
			// of the sandbox; the deferred Release reaps bubblewrap, so that
			// none is left for srt's parent to reap.
			if code, ok := cmd.Status(); ok {
				return code, nil
			}
			err := <-waited
			return finish(m, cmd, err)
		case err := <-waited:
			return finish(m, cmd, err)
		}
	}
}

// finish turns bubblewrap's end into srt's exit status when the init stage
// did not report one: bubblewrap failed, or the init stage could not start
// the command (and said so).
func finish(m *sandbox.Manager, cmd *sandbox.Cmd, err error) (int, error) {
	<-cmd.Done()
	if code, ok := cmd.Status(); ok {
		return code, nil
	}
	code := exitStatus(cmd.ProcessState, err)
	if !cmd.Started() && code != 125 && code != 126 && code != 127 {
		if derr := m.Diagnose(); derr != nil {
			return exitFailure, fmt.Errorf("the sandbox could not be built: %w", derr)
		}
		return exitFailure, fmt.Errorf("bubblewrap could not build the sandbox (exit status %d; its message is above)", code)
	}
	return code, nil
}

func pending(sigs chan os.Signal) os.Signal {
	select {
	case s := <-sigs:
		return s
	default:
		return nil
	}
}

func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return exitFailure
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func signalName(s os.Signal) string {
	if ss, ok := s.(syscall.Signal); ok {
		switch ss {
		case syscall.SIGINT:
			return "SIGINT"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGHUP:
			return "SIGHUP"
		}
	}
	return s.String()
}

// loadSettings is settings.Load, except that an empty default file which
// is a live sandbox's placeholder (srt keeps a sandbox from creating
// ~/.srt-settings.json by putting one there while it runs) reads as no
// file, as it was before that sandbox started.
func loadSettings(path string, explicit bool) (*settings.Config, bool, error) {
	if !explicit {
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && placeholders.Held(path) {
			return settings.Default(), false, nil
		}
	}
	return settings.Load(path, explicit)
}
