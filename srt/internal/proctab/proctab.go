// Package proctab reads the process table from /proc: each process's id,
// parent, command name and state. The tests and the benchmark tool use it
// to find the processes srt started and what became of them.
package proctab

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// Process is one line of the table.
type Process struct {
	PID, PPID int
	Comm      string // the command name, as the kernel keeps it (15 bytes at most)
	State     byte   // 'R', 'S', 'Z', …
}

// String is "pid 12 (bwrap) state Z".
func (p Process) String() string {
	return "pid " + strconv.Itoa(p.PID) + " (" + p.Comm + ") state " + string([]byte{p.State})
}

var errMalformed = errors.New("proctab: malformed stat line")

// parseStat reads the start of a /proc/PID/stat line: "pid (comm) state
// ppid …". The name may hold spaces and parentheses, so the fields after
// it are found from the last ')'.
func parseStat(data []byte) (Process, error) {
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 1 || end < open {
		return Process{}, errMalformed
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return Process{}, errMalformed
	}
	f := bytes.Fields(data[end+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return Process{}, errMalformed
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return Process{}, errMalformed
	}
	return Process{PID: pid, PPID: ppid, Comm: string(data[open+1 : end]), State: f[0][0]}, nil
}

// Read reads process pid's line.
func Read(pid int) (Process, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Process{}, err
	}
	return parseStat(data)
}

// All lists the processes that exist now (one that ends while it reads
// is left out).
func All() []Process {
	ents, _ := os.ReadDir("/proc")
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := Read(pid); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Children lists the processes whose parent is ppid, zombies included.
func Children(ppid int) []Process {
	var out []Process
	for _, p := range All() {
		if p.PPID == ppid {
			out = append(out, p)
		}
	}
	return out
}
