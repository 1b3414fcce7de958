//go:build linux

// Command srt-init is srt's in-sandbox init stage: bubblewrap starts it as
// PID 1 of every sandbox (see package initstage). It is a separate, small
// program because it is on the path of every command's start; srt falls back
// to re-executing itself when srt-init is not installed beside it.
package main

import (
	"os"

	"github.com/srt-sandbox/srt/internal/initstage"
)

func main() {
	initstage.Main()
	os.Stderr.WriteString("srt-init: this is srt's in-sandbox init stage; it is started by srt, not by hand\n")
	os.Exit(2)
}
