package placeholders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

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
	dir   *stateDir
	start uint64
	mu    sync.Mutex
	seq   int
}

// Open opens the registry in the state directory and cleans up after runs
// that died without doing so themselves.
func Open() (*Registry, error) {
	d, err := openState(true)
	if err != nil {
		return nil, err
	}
	st, err := startTime(os.Getpid())
	if err != nil {
		d.close()
		return nil, err
	}
	r := &Registry{dir: d, start: st}
	r.sweep()
	return r, nil
}

// sweep collects, under the lock, the journals of dead processes, and
// removes their run directories (MakeRunDir).
func (r *Registry) sweep() {
	names, err := r.dir.names()
	if err != nil {
		return
	}
	deadJournal := false
	for _, name := range names {
		var pid int
		var start uint64
		switch {
		case strings.HasPrefix(name, "run-"):
			if _, err := fmt.Sscanf(name, "run-%d-%d-", &pid, &start); err == nil && !alive(pid, start) {
				deadJournal = true
			}
		default:
			if pid, start, ok := isRunDir(name); ok && !alive(pid, start) {
				if st, err := r.dir.lstat(name); err == nil && ours(st, unix.S_IFDIR) {
					removeTree(r.dir.fd, name) // nothing in it is shared: no lock needed
				}
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
	fd, err := unix.Openat(r.dir.fd, "lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	var st unix.Stat_t
	if err == nil {
		if err = unix.Fstat(fd, &st); err == nil && !ours(st, unix.S_IFREG) {
			err = errUntrustedEntry
		}
		if err != nil {
			unix.Close(fd)
		}
	}
	if err == unix.ELOOP || err == errUntrustedEntry {
		// srt makes the lock a plain file of its own; anything else was
		// planted. Do not use it, and say so: it is a sign of an attack.
		return nil, fmt.Errorf("%s/lock is not a regular file of uid %d, so srt did not make it; something else wrote in srt's state directory: remove the directory", r.dir.path, os.Getuid())
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "lock")
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
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
	j := &journal{PID: os.Getpid(), StartTime: r.start, name: journalName(os.Getpid(), r.start, r.seq)}
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
	if err := j.write(r.dir); err != nil {
		return nil, fmt.Errorf("placeholder registry: %w", err)
	}
	c := &Claim{r: r, j: j}
	kept := j.Entries[:0]
	for _, e := range j.Entries {
		if k, ok := known[e.Path]; ok && sameFile(e.Path, k) {
			kept = append(kept, k) // another live run's placeholder: share it
			continue
		}
		id, err := create(e.Path, e.Dir, e.Content)
		if errors.Is(err, errParentMoved) {
			j.Entries = kept
			j.write(r.dir)
			return c, fmt.Errorf("placeholder registry: %w", err)
		}
		if err != nil {
			if !errors.Is(err, fs.ErrExist) {
				c.Missing = append(c.Missing, e.Path)
			}
			continue // a real file appeared meanwhile: it is protected, and not ours
		}
		e.Dev, e.Ino = id.Dev, id.Ino
		kept = append(kept, e)
	}
	j.Entries = kept
	return c, j.write(r.dir)
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
		if o.name != c.j.name && o.alive() {
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
	if err := r.dir.remove(c.j.name); err != nil {
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
		r.dir.remove(j.name)
	}
}

// Identity returns the device and inode of the placeholder at p that this
// claim made or shares; ok is false when the claim has none there (a file
// of someone else's appeared first).
func (c *Claim) Identity(p string) (dev, ino uint64, ok bool) {
	for _, e := range c.j.Entries {
		if e.Path == p && e.Ino != 0 {
			return e.Dev, e.Ino, true
		}
	}
	return 0, 0, false
}
