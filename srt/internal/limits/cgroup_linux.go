package limits

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/kernrand"
)

// Leaf is the cgroup v2 leaf of one sandbox: srt starts the sandbox's
// first process in it (FD, for clone3's CLONE_INTO_CGROUP), so memory.max
// and pids.max hold for everything the sandbox runs, and removes it once
// the sandbox is gone (Remove), or, when srt was killed, the next srt
// that makes a leaf there does (sweep).
type Leaf struct {
	Dir string
	dir *os.File
}

// leafPrefix starts the name of every leaf srt makes: srt-<pid>-, the pid
// of the srt that made it.
const leafPrefix = "srt-"

// MakeLeaf makes the leaf of a sandbox under cg with a's limits.
func MakeLeaf(cg *Cgroup, a *Applied) (*Leaf, error) {
	pid := strconv.Itoa(os.Getpid())
	// A process srt starts meanwhile (none is expected: its helpers are
	// running) lands in cg.Dir and makes enabling fail with EBUSY: moved
	// too, and tried again.
	for try := 1; len(cg.Enable) > 0; try++ {
		if cg.MoveSelf {
			if err := moveOurs(cg.Dir); err != nil {
				return nil, err
			}
		}
		err := write(filepath.Join(cg.Dir, "cgroup.subtree_control"), "+"+strings.Join(cg.Enable, " +"))
		if err == nil {
			break
		}
		if !cg.MoveSelf || !errors.Is(err, unix.EBUSY) || try == 5 {
			return nil, fmt.Errorf("enabling %s in %s: %w", strings.Join(cg.Enable, " and "), cg.Dir, err)
		}
	}
	sweep(cg.Dir)
	var r [6]byte
	kernrand.Fill(r[:])
	l := &Leaf{Dir: filepath.Join(cg.Dir, leafPrefix+pid+"-"+hex.EncodeToString(r[:]))}
	if err := os.Mkdir(l.Dir, 0o755); err != nil {
		return nil, err
	}
	err := l.set(a)
	if err == nil {
		l.dir, err = os.Open(l.Dir)
	}
	if err != nil {
		l.Remove()
		return nil, err
	}
	return l, nil
}

// selfLeaf is the name of the cgroup srt moves itself and its helpers
// into, beside the leaves, when the controllers must be enabled in the
// cgroup it started in (Cgroup.MoveSelf).
func selfLeaf(pid int) string { return leafPrefix + strconv.Itoa(pid) + "-self" }

// moveOurs moves srt and the processes it started from dir into its
// selfLeaf.
func moveOurs(dir string) error {
	self := filepath.Join(dir, selfLeaf(os.Getpid()))
	if err := os.Mkdir(self, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for _, p := range words(filepath.Join(dir, "cgroup.procs")) {
		if !ours(p) {
			continue
		}
		// A helper that has just ended is no error.
		if err := write(filepath.Join(self, "cgroup.procs"), p); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("moving srt and its helpers into a cgroup of their own, %s: %w", self, err)
		}
	}
	return nil
}

func (l *Leaf) set(a *Applied) error {
	if a.CgroupMemory > 0 {
		if err := write(filepath.Join(l.Dir, "memory.max"), strconv.FormatInt(a.CgroupMemory, 10)); err != nil {
			return err
		}
		// Swap would hold what memory.max pushes out: memory means
		// memory. (No swap controller, no swap file.)
		if err := write(filepath.Join(l.Dir, "memory.swap.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if a.CgroupPids > 0 {
		return write(filepath.Join(l.Dir, "pids.max"), strconv.FormatInt(a.CgroupPids, 10))
	}
	return nil
}

// FD is the leaf's descriptor, for SysProcAttr.CgroupFD.
func (l *Leaf) FD() int { return int(l.dir.Fd()) }

// Events are what the kernel counted in the leaf: processes the
// out-of-memory killer killed, and forks refused at pids.max.
func (l *Leaf) Events() (oomKills, forksRefused int) {
	return count(filepath.Join(l.Dir, "memory.events"), "oom_kill"), count(filepath.Join(l.Dir, "pids.events"), "max")
}

// Remove kills what is left in the leaf (nothing, once the sandbox is
// gone) and removes it.
func (l *Leaf) Remove() error {
	if l.dir != nil {
		l.dir.Close()
	}
	return remove(l.Dir)
}

func remove(dir string) error {
	err := unix.Rmdir(dir)
	if err != unix.EBUSY {
		return err
	}
	write(filepath.Join(dir, "cgroup.kill"), "1")
	for range 100 {
		if err = unix.Rmdir(dir); err != unix.EBUSY {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: %w", dir, err)
}

// sweep removes the leaves under dir of every srt that is gone (killed
// before it could remove its own).
func sweep(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), leafPrefix)
		pid, _, ok2 := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || !ok2 || err != nil || !e.IsDir() || n <= 0 {
			continue
		}
		if unix.Kill(n, 0) == unix.ESRCH {
			remove(filepath.Join(dir, e.Name()))
		}
	}
}

func write(file, s string) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// count is the value of key in a flat-keyed cgroup file ("key value"
// lines).
func count(file, key string) int {
	b, _ := os.ReadFile(file)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
