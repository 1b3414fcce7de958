//go:build linux

package placeholders

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// entry is one placeholder a run uses.
type entry struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Content is what srt wrote in a file placeholder: it is removed only
	// while it still holds exactly that.
	Content string `json:"content,omitempty"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Btime   int64  `json:"btime,omitempty"` // birth time (ns), where the filesystem keeps one
	// Shared: another run made it (of this state directory or another),
	// and this one adopted it.
	Shared bool `json:"shared,omitempty"`
	// Tmp is the temporary name, in the same directory, that the run
	// gives the placeholder while it makes it (makeAt): a sweep removes
	// what is there, which only a run killed before it gave the
	// placeholder its name can have left.
	Tmp string `json:"tmp,omitempty"`
}

func (e entry) id() fileID { return fileID{Dev: e.Dev, Ino: e.Ino, Btime: e.Btime} }

// journal is what one run uses, keyed by its process.
type journal struct {
	PID       int     `json:"pid"`
	StartTime uint64  `json:"start"` // /proc/<pid>/stat field 22, so a reused pid is not mistaken for us
	Entries   []entry `json:"entries"`
	// Released: the run has ended its claim, and these are the
	// placeholders other holders still held then. The next sweep removes
	// each once no one holds it, whether the process still runs or not.
	Released bool   `json:"released,omitempty"`
	name     string // in the state directory
}

// ended says whether the journal is a sweep's to collect: its run has
// released it or is dead.
func (j *journal) ended() bool { return j.Released || !j.alive() }

// maxJournal bounds what srt reads of one journal: a run's placeholders
// are a few hundred paths at most.
const maxJournal = 16 << 20

func journalName(pid int, start uint64, seq int) string {
	return fmt.Sprintf("run-%d-%d-%d.json", pid, start, seq)
}

func isJournal(name string) bool {
	return strings.HasPrefix(name, "run-") && strings.HasSuffix(name, ".json")
}

func (j *journal) write(d *stateDir) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return d.writeFile(j.name, data)
}

// readJournals loads every journal in the state directory. Only a regular
// file of the caller's is a journal: anything else under a journal's name
// (a symlink, another user's file) was not written by srt and is removed
// unread (unlinking never follows it).
func readJournals(d *stateDir) []*journal {
	names, _ := d.names()
	var out []*journal
	for _, n := range names {
		if !isJournal(n) {
			continue
		}
		data, err := d.readFile(n, maxJournal)
		if err == errUntrustedEntry || err == unix.ELOOP {
			if st, err := d.lstat(n); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
				d.remove(n)
			}
			continue
		}
		if err != nil {
			continue
		}
		j := &journal{name: n}
		if json.Unmarshal(data, j) != nil {
			d.remove(n) // a torn write of a journal whose writer died mid-way
			continue
		}
		out = append(out, j)
	}
	return out
}

// alive says whether the journal's process still runs.
func (j *journal) alive() bool { return alive(j.PID, j.StartTime) }

// alive says whether process pid, started at start, still runs.
func alive(pid int, start uint64) bool {
	st, err := startTime(pid)
	return err == nil && st == start
}

// startTime reads a process's start time (clock ticks since boot).
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
