//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/sandbox"
	"github.com/srt-sandbox/srt/settings"
)

// parseControlFD checks a --control-fd value as the reference does.
func parseControlFD(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, usageError{fmt.Sprintf("option '--control-fd <fd>' argument '%s' is invalid. must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).", v)}
	}
	return n, nil
}

// openControlFD probes the descriptor (srt must have inherited it, and a
// zero-length read must succeed: closed descriptors and write-only ends
// fail) and takes it over.
func openControlFD(n int) (*os.File, error) {
	err := srtlink.Inherited(n)
	if err == nil {
		_, err = unix.Read(n, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("--control-fd %d is not usable: %v. Refusing to run the command without the control channel it asks for.", n, err)
	}
	unix.CloseOnExec(n)
	return os.NewFile(uintptr(n), "control"), nil
}

// controlReader applies each complete config line from the control
// descriptor to the manager: the network lists change for the next
// connection. It reports a read error before any line through failed, so
// the caller can stop the command.
type controlReader struct {
	n      int
	f      *os.File
	m      *sandbox.Manager
	stderr io.Writer

	once   sync.Once
	failed chan error // an error before the first line
}

func (c *controlReader) run() {
	c.failed = make(chan error, 1)
	if os.Getenv("SRT_DEBUG") != "" {
		// The reference's line, which its tests wait for.
		fmt.Fprintf(c.stderr, "srt: debug: Listening for config updates on fd %d\n", c.n)
	}
	go func() {
		br := bufio.NewReaderSize(c.f, 64<<10)
		got := 0
		for {
			line, err := br.ReadString('\n')
			if strings.TrimSpace(line) != "" {
				got++
				c.apply(line)
			}
			if err == io.EOF {
				return // not an error: the command keeps its last config
			}
			if err != nil {
				if got == 0 {
					c.failed <- fmt.Errorf("control fd %d failed before delivering an update: %v. Refusing to run the command without the control channel it asks for.", c.n, err)
					return
				}
				fmt.Fprintf(c.stderr, "srt: Error reading control fd %d: %v. The control channel is closed; no further updates will be applied.\n", c.n, err)
				return
			}
		}
	}()
}

func (c *controlReader) apply(line string) {
	cfg, err := settings.Parse([]byte(line))
	if err != nil {
		fmt.Fprintf(c.stderr, "srt: Invalid config on control fd %d: ignored, previous config still in force\n", c.n)
		if os.Getenv("SRT_DEBUG") != "" {
			fmt.Fprintf(c.stderr, "srt: debug: control fd %d: %v\n", c.n, err)
		}
		return
	}
	if err := c.m.UpdateConfig(cfg); err != nil {
		fmt.Fprintf(c.stderr, "srt: control fd %d: the network proxy did not confirm the update, so it may not be in force: %v\n", c.n, err)
		return
	}
	// Said once the update is in force: UpdateConfig returns when the
	// decider has the new lists.
	if os.Getenv("SRT_DEBUG") != "" {
		fmt.Fprintf(c.stderr, "srt: debug: Config updated from control fd: %s\n", strings.TrimSpace(line))
	}
}
