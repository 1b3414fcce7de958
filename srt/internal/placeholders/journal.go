package placeholders

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
}

// journal is what one run uses, keyed by its process.
type journal struct {
	PID       int     `json:"pid"`
	StartTime uint64  `json:"start"` // /proc/<pid>/stat field 22, so a reused pid is not mistaken for us
	Entries   []entry `json:"entries"`
	file      string
}

func journalName(dir string, pid int, start uint64, seq int) string {
	return filepath.Join(dir, fmt.Sprintf("run-%d-%d-%d.json", pid, start, seq))
}

func (j *journal) write() error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := j.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, j.file)
}

// readJournals loads every journal in dir.
func readJournals(dir string) []*journal {
	names, _ := filepath.Glob(filepath.Join(dir, "run-*.json"))
	var out []*journal
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		j := &journal{file: n}
		if json.Unmarshal(data, j) != nil {
			os.Remove(n) // a torn write of a journal whose writer died mid-way
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
