//go:build linux

package placeholders

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// held is one path of a run's claim, held by a descriptor (O_CLOEXEC, so
// that it never reaches bubblewrap or the sandbox) for as long as the
// claim lasts.
type held struct {
	e  entry
	fd int
	// srt: the run made the placeholder or adopted another run's (the
	// marker was on it). It is in the run's journal, and its last holder
	// removes it. Otherwise the entry is the user's own, held only so
	// that no srt removes it while the sandbox mounts on it.
	srt bool
	// dir: while a placeholder the run made has its temporary name
	// (outcome made), its parent directory, O_PATH; else -1.
	dir int
}

// outcome is what take found at a wanted path.
type outcome int

const (
	took    outcome = iota // the path is held
	made                   // srt made the placeholder, under its temporary name (makeAt): settle gives it the path
	none                   // something srt cannot hold is there (a symlink, a fifo, an unreadable file): not a placeholder
	missing                // srt could not make the placeholder, so the command cannot make the path either
)

// maxTries bounds how often take looks again at a path whose entry
// changed while it took it (another run removed it as its last holder, or
// a process replaced it).
const maxTries = 16

// take holds the path of one want for a run: it makes the placeholder, or
// adopts the one another srt run holds (of any state directory), or holds
// the user's own file or directory there. uid is the caller's: only its
// own files are its placeholders.
func take(w Want, uid int, tmp string) (held, outcome, error) {
	for try := 0; try < maxTries; try++ {
		dir, base, err := openParent(w.Path)
		if errors.Is(err, errParentMoved) {
			return held{}, none, err
		}
		if err != nil {
			return held{}, missing, nil
		}
		h, out, again, err := takeAt(dir, base, w, uid, tmp)
		if out == made {
			h.dir = dir // settle's
		} else {
			unix.Close(dir)
		}
		if !again {
			return h, out, err
		}
	}
	return held{}, none, fmt.Errorf("placeholder %s: it kept changing while srt took it; something is replacing it", w.Path)
}

// takeAt is take for the entry base of directory dir; again asks take to
// look once more.
func takeAt(dir int, base string, w Want, uid int, tmp string) (h held, out outcome, again bool, err error) {
	fd, in, err := openEntry(dir, base)
	switch {
	case err == unix.ENOENT:
		return makeAt(dir, w, tmp)
	case err == errChanged:
		return held{}, none, true, nil
	case err != nil:
		return held{}, none, false, nil
	}
	// Hold it first, then look: once the use lock is ours and the name
	// still leads to it, no srt removes it until the lock goes.
	if err := useShared(fd); err != nil {
		unix.Close(fd)
		return held{}, none, false, fmt.Errorf("placeholder %s: %w", w.Path, err)
	}
	if !still(dir, base, in.id) {
		unix.Close(fd) // its last holder removed it meanwhile, or it was replaced
		return held{}, none, true, nil
	}
	h = held{fd: fd, dir: -1, e: entry{Path: w.Path, Dir: in.mode == unix.S_IFDIR, Content: w.Content, Dev: in.id.Dev, Ino: in.id.Ino, Btime: in.id.Btime}}
	// Another run's placeholder: the marker is on it, and it is the
	// directory or the file with the content this protection puts there.
	// Adopt it: this run is one of its holders, and the last one removes it.
	if int(in.uid) == uid && shaped(fd, in, w) {
		if fd, ok := adopt(dir, base, fd, in); ok {
			h.fd, h.srt, h.e.Shared = fd, true, true
		}
	}
	return h, took, false, nil
}

// makeAt makes the placeholder of w in dir under the temporary name tmp,
// which the run's journal named before it existed, and takes its locks
// there. The run's journal then records its identity, and only then does
// settle give it the wanted name, with a rename that replaces nothing. A
// run killed at any point so leaves nothing that its journal does not
// name by a name and an identity that a sweep finds (collect): under the
// temporary name, which is srt's alone, whatever is there, and under the
// wanted name only the very entry srt made. Another run never finds it at
// the wanted name without its locks.
func makeAt(dir int, w Want, tmp string) (h held, out outcome, again bool, err error) {
	fd, err := createAt(dir, tmp, w.Dir, w.Content)
	if err == unix.EEXIST {
		return held{}, none, false, fmt.Errorf("placeholder %s: srt's temporary name %s exists already; something made it: remove it", w.Path, tmp)
	}
	if err != nil {
		return held{}, missing, false, nil
	}
	// Lock it at once: a run that finds it under the wanted name adopts it.
	if err := useShared(fd); err != nil {
		discard(dir, tmp, fd, w.Dir)
		return held{}, none, false, fmt.Errorf("placeholder %s: %w", w.Path, err)
	}
	mark(fd, w.Dir)
	in, err := statFD(fd)
	if err != nil {
		discard(dir, tmp, fd, w.Dir)
		return held{}, none, false, fmt.Errorf("placeholder %s: %w", w.Path, err)
	}
	e := entry{Path: w.Path, Dir: w.Dir, Content: w.Content, Dev: in.id.Dev, Ino: in.id.Ino, Btime: in.id.Btime, Tmp: tmp}
	return held{e: e, fd: fd, srt: true}, made, false, nil
}

// settle gives a placeholder that makeAt made, and the run's journal
// records, its wanted name; again asks the caller to take the path once
// more (someone made it meanwhile). h is then the path's holder, or no
// one's (h.fd -1).
func settle(h *held, w Want) (out outcome, again bool, err error) {
	dir, tmp, base := h.dir, h.e.Tmp, filepath.Base(w.Path)
	defer unix.Close(dir)
	h.dir = -1
	switch err := place(dir, tmp, base, w.Dir); {
	case err == unix.EEXIST:
		discard(dir, tmp, h.fd, w.Dir) // someone made it meanwhile: take that
		*h = held{fd: -1, dir: -1}
		return none, true, nil
	case err == errNoPlace:
		// This filesystem renames only with replacing (and a directory
		// cannot be linked): make it under the wanted name itself, as srt
		// did before; a kill between that and the journal's record leaves
		// it behind.
		discard(dir, tmp, h.fd, w.Dir)
		*h, out, again, err = makeDirect(dir, base, w)
		return out, again, err
	case err != nil:
		discard(dir, tmp, h.fd, w.Dir)
		*h = held{fd: -1, dir: -1}
		return missing, false, nil
	}
	if in, err := statFD(h.fd); err != nil || !still(dir, base, in.id) {
		unix.Close(h.fd) // moved away as soon as it was made: look again
		*h = held{fd: -1, dir: -1}
		return none, true, nil
	}
	h.e.Tmp = ""
	return took, false, nil
}

// makeDirect makes the placeholder of w as base in dir itself, on a
// filesystem where place cannot.
func makeDirect(dir int, base string, w Want) (h held, out outcome, again bool, err error) {
	h = held{fd: -1, dir: -1}
	fd, err := createAt(dir, base, w.Dir, w.Content)
	if err == unix.EEXIST {
		return h, none, true, nil // someone made it meanwhile: take that
	}
	if err != nil {
		return h, missing, false, nil
	}
	// A run that finds it before the marker is there takes it for the
	// user's file and holds it as such; then the placeholder outlives
	// this run, and a later sweep removes it.
	if err := useShared(fd); err != nil {
		unix.Close(fd)
		return h, none, false, fmt.Errorf("placeholder %s: %w", w.Path, err)
	}
	mark(fd, w.Dir)
	in, err := statFD(fd)
	if err != nil || !still(dir, base, in.id) {
		unix.Close(fd) // moved away as soon as it was made: look again
		return h, none, true, nil
	}
	e := entry{Path: w.Path, Dir: w.Dir, Content: w.Content, Dev: in.id.Dev, Ino: in.id.Ino, Btime: in.id.Btime}
	return held{e: e, fd: fd, dir: -1, srt: true}, took, false, nil
}

// shaped says whether the open entry is what the placeholder of w is: a
// directory, or a file holding exactly w.Content.
func shaped(fd int, in info, w Want) bool {
	if w.Dir {
		return in.mode == unix.S_IFDIR
	}
	return in.mode == unix.S_IFREG && in.size == int64(len(w.Content)) && holds(fd, w.Content)
}

// letGo ends one holder's use of the placeholder e: fd is the holder's
// descriptor, or -1 for a run that is gone (a sweep). The placeholder is
// removed when no one else holds it (useExclusive) and it is still what
// srt made: the same file holding what srt wrote, or the same empty
// directory. The check and the removal are made relative to its parent,
// opened without following symlinks (openParent), so neither can be
// redirected to another directory. kept reports that the placeholder is
// still there for another holder to remove; a directory that is not empty
// is kept only when keepDir says a placeholder of srt's is left in it.
func letGo(e entry, fd int, keepDir bool) (kept bool, err error) {
	if fd >= 0 {
		defer unix.Close(fd)
	}
	if e.Ino == 0 {
		return false, nil // recorded, never made
	}
	dir, base, err := openParent(e.Path)
	if err != nil {
		return false, nil // the parent is gone or is no longer a plain directory: not ours to touch
	}
	defer unix.Close(dir)
	if fd < 0 {
		if fd, _, err = openEntry(dir, base); err != nil {
			return false, nil // gone, or something else now
		}
		defer unix.Close(fd)
	}
	own, err := statFD(fd)
	if err != nil || !own.id.same(e.id()) {
		return false, nil
	}
	return removeAt(dir, base, fd, own, e, keepDir)
}

// letGoTmp is letGo for the temporary name of a dead run's placeholder
// (makeAt): what is there is removed when no one holds it and it has the
// placeholder's identity, or, when the run died before it recorded that,
// when it is a file of the caller's holding what srt writes there (or the
// start of it: the run may have died while it wrote it) or an empty
// directory. The name is srt's alone (tmpName), so nothing of the user's
// has it. kept reports that someone holds a file there.
func letGoTmp(e entry) (kept bool) {
	if !strings.HasPrefix(e.Tmp, tmpPrefix) || strings.Contains(e.Tmp, "/") {
		return false
	}
	dir, _, err := openParent(e.Path)
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	fd, in, err := openEntry(dir, e.Tmp)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if int(in.uid) != os.Getuid() || e.Ino != 0 && !in.id.same(e.id()) {
		return false
	}
	if in.mode == unix.S_IFREG && in.size < int64(len(e.Content)) {
		buf := make([]byte, in.size)
		if n, _ := unix.Pread(fd, buf, 0); n != len(buf) || !strings.HasPrefix(e.Content, string(buf)) {
			return false
		}
		e.Content = string(buf) // what removeAt is to find there
	}
	kept, _ = removeAt(dir, e.Tmp, fd, in, e, false)
	return kept && in.mode != unix.S_IFDIR // a directory that is not empty is not srt's
}

// removeAt removes the entry base of dir, open as fd and described by own,
// when no one else holds it and it is still what srt made of e (letGo).
func removeAt(dir int, base string, fd int, own info, e entry, keepDir bool) (kept bool, err error) {
	switch err := useExclusive(fd); {
	case err == unix.EWOULDBLOCK:
		return true, nil // another run holds it: the last one removes it
	case err != nil:
		// This filesystem cannot say whether others hold it (NFS takes
		// LOCK_EX for a write lock, refused on a read-only descriptor):
		// leave it, rather than remove it under a sandbox.
		return false, nil
	}
	// No one takes it now without finding, once it has its lock, that the
	// name is gone (takeAt's still).
	if !still(dir, base, own.id) {
		return false, nil
	}
	flags := 0
	switch {
	case e.Dir && own.mode == unix.S_IFDIR:
		flags = unix.AT_REMOVEDIR // fails while it is not empty
	case !e.Dir && own.mode == unix.S_IFREG && own.size == int64(len(e.Content)) && holds(fd, e.Content):
	default:
		return false, nil // the user's now
	}
	switch err := unix.Unlinkat(dir, base, flags); err {
	case nil, unix.ENOENT:
		return false, nil
	case unix.ENOTEMPTY, unix.EEXIST:
		// Not empty: kept while what is in it may be srt's (placeholders
		// another run made in it, which that run's journal names; once
		// they are gone a later sweep removes this one), else the user's.
		return keepDir || placeholderShaped(fd, 3), nil
	default:
		return false, fmt.Errorf("removing placeholder %s: %w", e.Path, err)
	}
}

// placeholderShaped says whether everything in the directory fd could be
// placeholders of srt's: small regular files (srt writes at most a few
// lines in one) and directories holding only such, down to depth levels
// and 64 entries a directory. A directory of srt's that another run's
// placeholders keep from being removed stays in the journal this way; one
// the user put a real file in is left to the user.
func placeholderShaped(fd, depth int) bool {
	if depth == 0 {
		return false
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(dup), "placeholder")
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return false
	}
	names, err := f.Readdirnames(65)
	if err != nil || len(names) > 64 {
		return false
	}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return false
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			if st.Size > 1024 {
				return false
			}
		case unix.S_IFDIR:
			sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return false
			}
			ok := placeholderShaped(sub, depth-1)
			unix.Close(sub)
			if !ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}
