//go:build linux

// Command probe is the hostile half of the escape suite in srt/internal/e2e.
// The tests run it inside a sandbox (srt -s settings -- /abs/probe attack
// args…); each invocation makes one attack and prints what happened, one
// line per step (a step is one system call of the attack, on one target):
//
//	RESULT <step>[@<target>] <outcome>
//
// where outcome is "ok", the errno's name (EPERM, EACCES, EROFS, …) or a
// short fixed word. Other lines (DATA, PROC, FD, NOTE) carry what the tests
// use to check that nothing leaked. The probe exits 0 unless it is killed
// (2 on a usage error), so that a refusal is read from its RESULT lines,
// never guessed from an exit status.
//
// Every attack has a control in the tests: the same code run where the
// protection is lifted (an opt-out setting, a nested namespace the probe
// makes itself, or no sandbox at all), so that a refusal cannot come from a
// broken probe.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// attack runs one attack with its arguments.
type attack struct {
	args int // number of arguments, -1: any
	run  func(args []string)
}

var attacks = map[string]attack{}

func register(name string, args int, run func(args []string)) {
	attacks[name] = attack{args, run}
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	a, ok := attacks[os.Args[1]]
	if !ok || (a.args >= 0 && len(os.Args)-2 != a.args) {
		usage()
	}
	a.run(os.Args[2:])
}

func usage() {
	names := make([]string, 0, len(attacks))
	for n := range attacks {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: probe ATTACK [ARGS]; attacks: %s\n", strings.Join(names, " "))
	os.Exit(2)
}

// outcome names what err says: "ok", an errno name, or "error".
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
		return fmt.Sprintf("errno%d", int(errno))
	}
	return "error"
}

// report prints the RESULT line of one step and returns whether it worked.
func report(name string, err error) bool {
	fmt.Printf("RESULT %s %s\n", name, outcome(err))
	if err != nil {
		fmt.Printf("NOTE %s: %v\n", name, err)
	}
	return err == nil
}

// reportWord prints a RESULT line whose outcome is a fixed word.
func reportWord(name, word string) {
	fmt.Printf("RESULT %s %s\n", name, word)
}

func note(format string, args ...any) {
	fmt.Printf("NOTE "+format+"\n", args...)
}

func init() {
	// noop is what the namespace attacks start in a child: it only has to
	// start to prove the child exists.
	register("noop", -1, func([]string) {})
}
