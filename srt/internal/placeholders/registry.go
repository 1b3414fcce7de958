//go:build linux

package placeholders

import (
	"errors"
	"fmt"
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

// Registry coordinates placeholders between srt processes (through locks
// on the placeholders themselves, and journals in the state directory)
// and between the commands of one process (doc.go).
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

// sweep removes the run directories (MakeRunDir) of dead processes, and
// collects, under the lock, the journals of runs that ended.
func (r *Registry) sweep() {
	names, err := r.dir.names()
	if err != nil {
		return
	}
	journals := false
	for _, name := range names {
		if isJournal(name) {
			journals = true
		} else if pid, start, ok := isRunDir(name); ok && !alive(pid, start) {
			if st, err := r.dir.lstat(name); err == nil && ours(st, unix.S_IFDIR) {
				removeTree(r.dir.fd, name) // nothing in it is shared: no lock needed
			}
		}
	}
	if journals {
		if unlock, err := r.lock(); err == nil {
			r.collect(readJournals(r.dir))
			unlock()
		}
	}
}

// Claim is one run's use of placeholders.
type Claim struct {
	r    *Registry
	j    *journal
	held []held // in the order of the wants: a directory before what is in it
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

// Acquire takes the placeholders of one run: it creates those that do not
// exist yet, adopts those another run holds, and holds the user's own
// files and directories at the other paths, until Release. The journal is
// written before anything is created, and names what is created by a name
// and an identity before it takes a wanted path (acquire.go), so that a
// crash at any point leaves a record a sweep can act on.
func (r *Registry) Acquire(wants []Want) (*Claim, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lock()
	if err != nil {
		return nil, fmt.Errorf("placeholder registry: %w", err)
	}
	defer unlock()
	r.collect(readJournals(r.dir))
	r.seq++
	j := &journal{PID: os.Getpid(), StartTime: r.start, name: journalName(os.Getpid(), r.start, r.seq)}
	// Record intent first: every path, and the temporary name each
	// placeholder will have while it is made.
	for _, w := range wants {
		j.Entries = append(j.Entries, entry{Path: w.Path, Dir: w.Dir, Content: w.Content, Tmp: tmpName()})
	}
	if err := j.write(r.dir); err != nil {
		return nil, fmt.Errorf("placeholder registry: %w", err)
	}
	a := newAcquisition(r, j, wants, os.Getuid())
	failed := a.run()
	c := &Claim{r: r, j: j, held: a.held(), Missing: a.missing}
	j.Entries = c.recorded()
	if err := j.write(r.dir); failed == nil {
		failed = err
	}
	if failed != nil {
		failed = fmt.Errorf("placeholder registry: %w", failed)
	}
	return c, failed
}

// recorded lists the claim's placeholders of srt's, for its journal.
func (c *Claim) recorded() []entry {
	var out []entry
	for _, h := range c.held {
		if h.srt {
			out = append(out, h.e)
		}
	}
	return out
}

// Release ends the run's claim. Each placeholder no one else holds is
// removed; those others still hold stay in the journal, marked released,
// for a later sweep to remove once no one does (in case all those holders
// die: the one that lets go last removes it otherwise).
func (c *Claim) Release() error {
	var errs []error
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := r.lock()
	if err != nil {
		for _, h := range c.held {
			unix.Close(h.fd) // the placeholders stay, and the next sweep removes them
		}
		c.held = nil
		return err
	}
	defer unlock()
	// others: what the run held as the user's.
	var kept, others []entry
	for i := len(c.held) - 1; i >= 0; i-- { // a directory after what is in it
		h := c.held[i]
		if !h.srt {
			unix.Close(h.fd)
			others = append(others, h.e)
			continue
		}
		// A directory of srt's that is not empty is kept while something
		// srt may have made is in it.
		k, err := letGo(h.e, h.fd, beneath(h.e.Path, kept) || beneath(h.e.Path, others))
		if err != nil {
			errs = append(errs, err)
		}
		if k {
			kept = append(kept, h.e)
		}
	}
	c.held = nil
	if len(kept) == 0 {
		if err := r.dir.remove(c.j.name); err != nil && err != unix.ENOENT {
			errs = append(errs, err)
		}
	} else {
		c.j.Entries, c.j.Released = reverse(kept), true
		if err := c.j.write(r.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// collect cleans up after runs that ended: for each journal of a dead
// process, or released, it removes the placeholders no one holds any
// more, and keeps the journal while some are still held.
func (r *Registry) collect(all []*journal) {
	for _, j := range all {
		if !j.ended() {
			continue
		}
		var kept []entry
		for i := len(j.Entries) - 1; i >= 0; i-- {
			e := j.Entries[i]
			k, _ := letGo(e, -1, beneath(e.Path, kept))
			if e.Tmp != "" && letGoTmp(e) {
				k = true
			}
			if k {
				kept = append(kept, e)
			}
		}
		switch {
		case len(kept) == 0:
			r.dir.remove(j.name)
		case len(kept) < len(j.Entries):
			j.Entries = reverse(kept)
			j.write(r.dir)
		}
	}
}

// beneath says whether one of entries lies beneath directory p.
func beneath(p string, entries []entry) bool {
	for _, e := range entries {
		if strings.HasPrefix(e.Path, p+"/") {
			return true
		}
	}
	return false
}

func reverse(es []entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[len(es)-1-i] = e
	}
	return out
}

// Identity returns the device and inode of what the claim holds at p: the
// placeholder it made or adopted, or the user's entry it found there; ok
// is false when it holds nothing there.
func (c *Claim) Identity(p string) (dev, ino uint64, ok bool) {
	for _, h := range c.held {
		if h.e.Path == p {
			return h.e.Dev, h.e.Ino, true
		}
	}
	return 0, 0, false
}
