//go:build linux

// Command srt runs a command under OS-level limits on what it may read,
// write and reach over the network. See docs/cli.md.
package main

import (
	"os"

	"github.com/srt-sandbox/srt/internal/initstage"
)

func main() {
	initstage.Main() // returns unless this process is a sandbox's init stage
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
