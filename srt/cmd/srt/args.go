package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// commandOf is the shell command srt runs: -c's, or the arguments quoted
// (with a warning when both are given).
func commandOf(ctx *cli.Context, stderr io.Writer) (string, error) {
	command := ctx.String("c")
	switch {
	case ctx.IsSet("c") && ctx.NArg() > 0:
		fmt.Fprintf(stderr, "srt: warning: -c was given, so the command arguments (%s) are ignored\n", sandbox.Quote(ctx.Args().Slice()))
	case ctx.IsSet("c"):
	case ctx.NArg() == 0:
		return "", usageError{"no command given; run `srt [flags] -- command [args…]` or `srt -c 'shell command'`"}
	default:
		command = sandbox.Quote(ctx.Args().Slice())
	}
	return command, nil
}

// settingsPath is the settings file srt reads, and whether --settings
// named it.
func settingsPath(ctx *cli.Context) (string, bool, error) {
	path, explicit := ctx.String("settings"), ctx.IsSet("settings")
	if !explicit {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false, fmt.Errorf("cannot find the default settings file: %v; set HOME or pass --settings", err)
		}
		path = settings.DefaultPath(home)
	}
	return path, explicit, nil
}
