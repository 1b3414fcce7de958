//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/sandbox"
)

// passFDs checks the --pass-fd values and takes over each descriptor: the
// command gets it at the same number. taken are the numbers other options
// use already (--control-fd, --violations-fd), by option name.
func passFDs(values []string, taken map[int]string) ([]sandbox.CommandOption, error) {
	var opts []sandbox.CommandOption
	seen := map[int]bool{}
	for _, v := range values {
		n, err := strconv.Atoi(v)
		if err != nil || n < sandbox.MinPassFD || n > sandbox.MaxPassFD || strings.TrimLeft(v, "0123456789") != "" {
			return nil, usageError{fmt.Sprintf("option '--pass-fd <fd>' argument '%s' is invalid. must be an integer file descriptor from %d to %d.", v, sandbox.MinPassFD, sandbox.MaxPassFD)}
		}
		if seen[n] {
			continue // the same descriptor named twice is given once
		}
		seen[n] = true
		if opt, ok := taken[n]; ok {
			return nil, usageError{fmt.Sprintf("--pass-fd %d is also %s's descriptor; give each option its own", n, opt)}
		}
		if err := srtlink.Inherited(n); err != nil {
			return nil, fmt.Errorf("--pass-fd %d is not usable: %v; open it for srt (for example %d<FILE or %d<&0) or drop the option", n, err, n, n)
		}
		// srt itself never uses it, and its other children must not get it.
		unix.CloseOnExec(n)
		opts = append(opts, sandbox.WithPassFile(n, os.NewFile(uintptr(n), "pass-fd "+v)))
	}
	return opts, nil
}
