// Command srt runs a command under OS-level limits on what it may read,
// write and reach over the network. See docs/cli.md; on macOS,
// docs/macos.md says what it does there.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt/internal/version"
	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// usageError is a problem with the command line, said on stderr.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// linuxOnly are the flags of srt's Linux sandbox, refused on macOS.
var linuxOnly = map[string]string{
	"control-fd":                   "live config updates",
	"pass-fd":                      "passing descriptors",
	"backend":                      "the bubblewrap and Landlock backends",
	"allow-weaker":                 "the Landlock backend's exemptions",
	"report-filesystem-violations": "the filesystem observer (macOS reports every denial in its log instead)",
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 && args[1] == "proxy" {
		fmt.Fprintln(stderr, "srt: srt proxy is not supported on macOS yet (docs/macos.md)")
		return 1
	}
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, c.App.Version) }
	cli.HelpFlag = &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show this help and exit"}
	status := 0
	flags := []cli.Flag{
		&cli.StringFlag{Name: "settings", Aliases: []string{"s"}, Usage: "settings file `PATH` (default ~/.srt-settings.json)"},
		&cli.StringFlag{Name: "c", Usage: "run `COMMAND` with the sandbox's shell (bash -c); command arguments are then ignored"},
		&cli.BoolFlag{Name: "debug", Aliases: []string{"d"}, Usage: "print debug lines on stderr (same as SRT_DEBUG=1)"},
		&cli.BoolFlag{Name: "show-violations", Usage: "append the command's <sandbox_violations> block to stderr when it exits"},
	}
	for name, what := range linuxOnly {
		flags = append(flags, &cli.StringSliceFlag{Name: name, Usage: "Linux only: " + what, Hidden: true})
	}
	app := &cli.App{
		Name: "srt", Usage: "run a command in a sandbox that limits what it may read, write and reach",
		UsageText: "srt [flags] [--] command [args…]\nsrt [flags] -c 'shell command'",
		Version:   version.Version, HideHelpCommand: true, Writer: stdout, ErrWriter: stderr, Flags: flags,
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(ctx *cli.Context) error {
			code, err := runCommand(ctx, stdout, stderr)
			status = code
			return err
		},
	}
	if err := app.Run(args); err != nil {
		var ue usageError
		var fe *settings.FileError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "srt: %s\nRun 'srt --help' for usage.\n", ue.msg)
		case errors.As(err, &fe):
			fmt.Fprintf(stderr, "srt: %s\n%s\n", fe.Error(), fe.Refusal)
		default:
			fmt.Fprintf(stderr, "srt: %v\n", err)
		}
		return 1
	}
	return status
}

func runCommand(ctx *cli.Context, stdout, stderr io.Writer) (int, error) {
	for name, what := range linuxOnly {
		if ctx.IsSet(name) {
			return 1, usageError{fmt.Sprintf("--%s (%s) is not supported on macOS (docs/macos.md)", name, what)}
		}
	}
	command, err := commandOf(ctx, stderr)
	if err != nil {
		return 1, err
	}
	path, explicit, err := settingsPath(ctx)
	if err != nil {
		return 1, err
	}
	cfg, _, err := settings.Load(path, explicit)
	if err != nil {
		return 1, err
	}
	var store sandbox.ViolationStore
	c := sandbox.MacOSCommand{Config: cfg, Command: command, SettingsFiles: []string{path},
		Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Violations: &store}
	if ctx.Bool("debug") || os.Getenv("SRT_DEBUG") != "" {
		c.Debug = stderr
	}
	code, err := sandbox.RunMacOS(context.Background(), c)
	if err != nil {
		return 1, err
	}
	if ctx.Bool("show-violations") {
		if vs := store.ForKey(command); len(vs) > 0 {
			fmt.Fprint(stderr, sandbox.Annotate("", vs))
		}
	}
	return code, nil
}
