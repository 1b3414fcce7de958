package placeholders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Want is a placeholder a plan needs. Wants are created in order, so a
// directory comes before the placeholders in it; they are removed in the
// opposite order.
type Want struct {
	Path string
	Dir  bool
	// Content is what a file placeholder holds (usually nothing).
	Content string
}

// Registry coordinates placeholders between srt processes (through the
// state directory) and between the commands of one process.
type Registry struct {
	dir   string
	start uint64
	mu    sync.Mutex
	seq   int
}

// Open opens the registry in the state directory and cleans up after runs
// that died without doing so themselves.
func Open() (*Registry, error) {
	dir, err := StateDir()
	if err != nil {
		return nil, err
	}
	st, err := startTime(os.Getpid())
	if err != nil {
		return nil, err
	}
	r := &Registry{dir: dir, start: st}
	r.sweep()
	return r, nil
}

// sweep collects, under the lock, the journals of dead processes, and
// removes their run directories (MakeRunDir).
func (r *Registry) sweep() {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return
	}
	deadJournal := false
	for _, e := range ents {
		var pid int
		var start uint64
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "run-"):
			if _, err := fmt.Sscanf(name, "run-%d-%d-", &pid, &start); err == nil && !alive(pid, start) {
				deadJournal = true
			}
		case e.IsDir():
			if pid, start, ok := isRunDir(name); ok && !alive(pid, start) {
				os.RemoveAll(filepath.Join(r.dir, name)) // nothing in it is shared: no lock needed
			}
		}
	}
	if deadJournal {
		if unlock, err := r.lock(); err == nil {
			r.collect(readJournals(r.dir))
			unlock()
		}
	}
}

// Claim is one run's use of placeholders.
type Claim struct {
	r *Registry
	j *journal
	// Missing are the wanted placeholders that could not be created; the
	// command could not create them either, so they need no mount.
	Missing []string
}

// lock takes the registry's cross-process lock.
func (r *Registry) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(r.dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Acquire records the placeholders of one run, creating those
// that do not exist yet. The journal is written before anything is created,
// so a crash at any point leaves a record for the next run to clean.
func (r *Registry) Acquire(wants []Want) (*Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lock()
	if err != nil {
		return nil, fmt.Errorf("placeholder registry: %w", err)
	}
	defer unlock()
	all := readJournals(r.dir)
	r.collect(all)
	r.seq++
	j := &journal{PID: os.Getpid(), StartTime: r.start, file: journalName(r.dir, os.Getpid(), r.start, r.seq)}
	known := map[string]entry{}
	for _, o := range all {
		if o.alive() {
			for _, e := range o.Entries {
				known[e.Path] = e
			}
		}
	}
	// Record intent first.
	for _, w := range wants {
		j.Entries = append(j.Entries, entry{Path: w.Path, Dir: w.Dir, Content: w.Content})
	}
	if err := j.write(); err != nil {
		return nil, fmt.Errorf("placeholder registry: %w", err)
	}
	c := &Claim{r: r, j: j}
	kept := j.Entries[:0]
	for _, e := range j.Entries {
		if k, ok := known[e.Path]; ok && sameFile(e.Path, k) {
			kept = append(kept, k) // another live run's placeholder: share it
			continue
		}
		if err := create(e); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				c.Missing = append(c.Missing, e.Path)
			}
			continue // a real file appeared meanwhile: it is protected, and not ours
		}
		if id, ok := identity(e.Path); ok {
			e.Dev, e.Ino = id.Dev, id.Ino
			kept = append(kept, e)
		}
	}
	j.Entries = kept
	return c, j.write()
}

// Release ends the run's claim: it removes the placeholders no other live
// run uses.
func (c *Claim) Release() error {
	var errs []error
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	all := readJournals(r.dir)
	inUse := map[string]bool{}
	for _, o := range all {
		if o.file != c.j.file && o.alive() {
			for _, e := range o.Entries {
				inUse[e.Path] = true
			}
		}
	}
	for i := len(c.j.Entries) - 1; i >= 0; i-- { // a directory after what is in it
		e := c.j.Entries[i]
		if !inUse[e.Path] {
			if err := removeIfOurs(e); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.Remove(c.j.file); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// collect cleans up after runs that died without releasing their claims.
func (r *Registry) collect(all []*journal) {
	inUse := map[string]bool{}
	var dead []*journal
	for _, j := range all {
		if j.alive() {
			for _, e := range j.Entries {
				inUse[e.Path] = true
			}
		} else {
			dead = append(dead, j)
		}
	}
	for _, j := range dead {
		for i := len(j.Entries) - 1; i >= 0; i-- {
			if e := j.Entries[i]; !inUse[e.Path] && e.Ino != 0 {
				removeIfOurs(e)
			}
		}
		os.Remove(j.file)
	}
}

func create(e entry) error {
	if e.Dir {
		return os.Mkdir(e.Path, 0o755)
	}
	f, err := os.OpenFile(e.Path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(e.Content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type fileID struct{ Dev, Ino uint64 }

func identity(p string) (fileID, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{Dev: uint64(st.Dev), Ino: st.Ino}, true
}

func sameFile(p string, e entry) bool {
	id, ok := identity(p)
	return ok && e.Ino != 0 && id.Dev == e.Dev && id.Ino == e.Ino
}

// removeIfOurs removes a placeholder only while it is still the file (with
// the content srt wrote) or the empty directory srt created: anything else
// is the user's now.
func removeIfOurs(e entry) error {
	if !sameFile(e.Path, e) {
		return nil
	}
	fi, err := os.Lstat(e.Path)
	if err != nil {
		return nil
	}
	if e.Dir {
		if !fi.IsDir() {
			return nil
		}
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("removing placeholder %s: %w", e.Path, err)
		}
		return nil
	}
	if !fi.Mode().IsRegular() || fi.Size() != int64(len(e.Content)) {
		return nil
	}
	if e.Content != "" {
		if data, err := os.ReadFile(e.Path); err != nil || string(data) != e.Content {
			return nil
		}
	}
	if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing placeholder %s: %w", e.Path, err)
	}
	return nil
}
