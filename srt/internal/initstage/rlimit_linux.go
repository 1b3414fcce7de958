package initstage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// RlimitFlag is argv[1] of the init stage's re-exec that sets the
// command's rlimits (Spec.Rlimits) and then execs the command:
//
//	<exe> --srt-rlimits=v1 EXEFD NAME:CUR:MAX… -- command…
//
// EXEFD is the descriptor the init stage passed its executable on, which
// the command must not inherit. The re-exec runs under everything the
// init stage applied to itself (seccomp, Landlock); only the command and
// what it starts are under the rlimits, never the init stage, whose
// threads and descriptors a fork bomb or a descriptor limit would
// otherwise take from it.
const RlimitFlag = "--srt-rlimits=v1"

// rlimitResources maps RlimitNames to the kernel's resources.
var rlimitResources = map[string]int{
	"nproc":  unix.RLIMIT_NPROC,
	"data":   unix.RLIMIT_DATA,
	"nofile": unix.RLIMIT_NOFILE,
	"cpu":    unix.RLIMIT_CPU,
}

// rlimitArgv is the argv that starts command through the re-exec, with the
// init stage's executable on descriptor exeSlot.
func rlimitArgv(exeSlot int, limits []Rlimit, command []string) (path string, argv []string) {
	path = "/proc/self/fd/" + strconv.Itoa(exeSlot)
	argv = []string{path, RlimitFlag, strconv.Itoa(exeSlot)}
	for _, r := range limits {
		argv = append(argv, r.String())
	}
	argv = append(argv, "--")
	return path, append(argv, command...)
}

// rlimitMain is the re-exec: it sets the limits and execs the command,
// and exits as start's caller would when the command cannot be run.
func rlimitMain(args []string) int {
	fd, limits, command, err := parseRlimitArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: init stage: %v\n", err)
		return 125
	}
	unix.Close(fd)
	for _, r := range limits {
		// syscall's Setrlimit, not unix's: it also tells the runtime
		// not to put back its own RLIMIT_NOFILE at exec.
		if err := syscall.Setrlimit(rlimitResources[r.Name], &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			fmt.Fprintf(os.Stderr, "srt: init stage: cannot set the limit %s: %v\n", r, err)
			return 125
		}
	}
	err = syscall.Exec(command[0], command, os.Environ())
	fmt.Fprintf(os.Stderr, "srt: cannot run %s: %v\n", command[0], err)
	if errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}

func parseRlimitArgs(args []string) (int, []Rlimit, []string, error) {
	if len(args) < 3 || args[0] != RlimitFlag {
		return 0, nil, nil, errors.New("this init stage speaks " + RlimitFlag + "; srt and its init stage come from different versions")
	}
	fd, err := strconv.Atoi(args[1])
	if err != nil || fd < 3 {
		return 0, nil, nil, errors.New("bad descriptor " + strconv.Quote(args[1]))
	}
	var limits []Rlimit
	for i := 2; i < len(args); i++ {
		if args[i] == "--" {
			if i+1 == len(args) {
				break
			}
			return fd, limits, args[i+1:], nil
		}
		r, err := ParseRlimit(args[i])
		if err != nil {
			return 0, nil, nil, err
		}
		limits = append(limits, r)
	}
	return 0, nil, nil, errors.New("no command")
}
