//go:build linux

// Command subreaper runs a program as a child subreaper would (a container
// whose PID 1 is an agent host, a service manager) and reports every
// process the program left behind: after each run, any process that is
// now its child, alive or a zombie, is one the program started and did
// not reap. The tests use it to check that no process srt starts outlives
// srt, for the CLI and for a host of the library.
//
//	subreaper [-n RUNS] -- PROGRAM [ARGS…]
//
// It runs PROGRAM RUNS times (default 1), one after the other, with its own
// stdio. Exit status: 0 when nothing was left behind and every run exited
// 0; 1 otherwise, with one line on stderr per finding. Whatever was left
// behind is killed and reaped before it exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/proctab"
)

func main() {
	runs := flag.Int("n", 1, "how many times to run the program")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: subreaper [-n RUNS] -- PROGRAM [ARGS…]")
		os.Exit(2)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "subreaper: PR_SET_CHILD_SUBREAPER: %v\n", err)
		os.Exit(2)
	}
	failed := false
	for i := 1; i <= *runs; i++ {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "subreaper: run %d: %v\n", i, err)
			failed = true
		}
		// The program's orphans were handed to us as it exited, before
		// Wait returned: what is our child now, it left behind.
		for _, p := range proctab.Children(os.Getpid()) {
			fmt.Fprintf(os.Stderr, "subreaper: run %d left behind %s\n", i, p)
			failed = true
		}
		reapAll()
	}
	if failed {
		os.Exit(1)
	}
}

// reapAll kills and reaps every child, for at most 10 s.
func reapAll() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range proctab.Children(os.Getpid()) {
			unix.Kill(p.PID, unix.SIGKILL)
		}
		pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		switch {
		case err == unix.ECHILD:
			return
		case pid > 0 || err == unix.EINTR:
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "subreaper: children left after 10 s")
	os.Exit(1)
}
