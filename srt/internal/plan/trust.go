package plan

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// A grant is on the path as written (issue 10, items 7, 14, 19). An allow
// entry (allowRead, allowWrite, an allowRead pattern's match, the default
// write path, tlsTerminate's CA certificate) that passes through a symlink
// a sandbox could have made grants nothing: a command that may write a
// directory could otherwise plant `proj/data -> ~/.ssh` in one run and read
// the keys through allowRead "proj/data" in the next, or redirect an
// allowWrite to any directory of the caller's.
//
// A symlink is trusted only when the caller could not have made it, nor
// put it where it is:
//
//	the caller is root                    untrusted (root can write every directory)
//	the link is the caller's              untrusted
//	its directory is the caller's, or     untrusted, unless the directory is sticky
//	group- or other-writable              and neither it nor the link is the caller's
//	otherwise                             trusted: /home -> /data/home made by root
//
// The working directory and home are given, not written: a relative or "~"
// entry's base is resolved through its symlinks as it is (see spelled).

// errUntrusted stops a resolution at the first untrusted symlink.
type errUntrusted struct {
	link, target, why string
}

func (e *errUntrusted) Error() string { return "untrusted symlink " + e.link }

// distrust says why the symlink at link (its directory resolved) could
// have been made by the caller, or "" when it could not.
func (b *builder) distrust(link string) string {
	if b.in.UID == 0 {
		return "srt runs as root, which can write every directory"
	}
	li, err := b.in.FS.Lstat(link)
	if err != nil {
		return "it cannot be inspected"
	}
	ls, ok := li.Sys().(*syscall.Stat_t)
	if !ok {
		return "its owner is unknown"
	}
	if int(ls.Uid) == b.in.UID {
		return "it is yours"
	}
	di, err := b.in.FS.Lstat(filepath.Dir(link))
	if err != nil {
		return "its directory cannot be inspected"
	}
	ds, ok := di.Sys().(*syscall.Stat_t)
	if !ok {
		return "its directory's owner is unknown"
	}
	if !b.mayWrite(ds) {
		return ""
	}
	if ds.Mode&syscall.S_ISVTX != 0 && int(ds.Uid) != b.in.UID {
		return "" // sticky: only the link's or the directory's owner may replace it
	}
	return "its directory is writable by you"
}

// mayWrite says whether the caller could write the directory st describes,
// erring towards yes: a directory of its own (it could chmod it), or one
// whose group or others may write. The group bits count whatever the
// caller's groups: with an ACL they are the mask, and a named entry may
// give the caller what they show; srt reads no ACLs.
func (b *builder) mayWrite(st *syscall.Stat_t) bool {
	return int(st.Uid) == b.in.UID || st.Mode&0o022 != 0
}

// grant resolves p, a path spelled beneath s.base, for an allow entry: its
// base as given, then through trusted symlinks only. It returns the real
// path and what is there; or ok false, with refused true when a symlink on
// the way could have been planted (srt then warns, once per symlink and
// entry), false when p does not exist. The path is resolved once, and what was checked is what is
// granted: a name swapped for a symlink between two looks (issue 10, item
// 7) cannot slip through.
func (b *builder) grant(s spelled, p string) (real string, fi fs.FileInfo, ok, refused bool) {
	base, err := fsview.Realpath(b.in.FS, s.base)
	if err != nil {
		return "", nil, false, false
	}
	real, missing, err := fsview.ResolveBeneath(b.in.FS, base, s.below(p), func(link, target string) error {
		if why := b.distrust(link); why != "" {
			return &errUntrusted{link: link, target: target, why: why}
		}
		return nil
	})
	var u *errUntrusted
	if errors.As(err, &u) {
		b.refuse(s, p, u)
		return "", nil, false, true
	}
	if err != nil || missing != "" {
		return "", nil, false, false
	}
	fi, err = b.in.FS.Lstat(real)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return "", nil, false, false // changed while srt looked: granted nothing
	}
	return real, fi, true, false
}

// idOf returns the identity of the file fi describes, or nil.
func idOf(fi fs.FileInfo) *FileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return &FileID{Dev: uint64(st.Dev), Ino: st.Ino}
}

// changedOf is fi's change time (ctime), in ns since the epoch.
func changedOf(fi fs.FileInfo) int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return ctimeOf(st)
}

// refuse warns, once per symlink and entry, that s grants nothing at p.
func (b *builder) refuse(s spelled, p string, u *errUntrusted) {
	key := s.field + "\x00" + u.link
	if b.warned[key] {
		return
	}
	b.warned[key] = true
	real := "it"
	if r, err := fsview.Realpath(b.in.FS, p); err == nil {
		real = r
	}
	b.warn("%s %q grants nothing: it passes through the symlink %s -> %s, which a sandbox could have made (%s); a grant is on the path as written — name %s itself if that is what you mean", s.field, s.entry, u.link, u.target, u.why, real)
}

// crossing finds, for a deny, a symlink on the way to p that leads to "/"
// or to a directory at or above itself, or a p whose real path is "/" or
// above p while p is not: such a deny would hide the whole system or the
// tree it sits in (a command that may write where a deny pattern matches
// plants `build -> /`, and every later run fails). It returns the link
// ("" when there is none) and where it leads.
func (b *builder) crossing(p string) (link, to string, found bool) {
	var last, lastTo string
	stop := errors.New("crossing")
	real, missing, err := fsview.ResolveBeneath(b.in.FS, "/", p, func(l, target string) error {
		t := target
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(l), t)
		}
		r, _, err := fsview.ResolveExisting(b.in.FS, t)
		if err != nil {
			return nil
		}
		last, lastTo = l+" -> "+target, r
		if fsview.IsWithin(l, r) {
			return stop
		}
		return nil
	})
	switch {
	case errors.Is(err, stop):
		return last, lastTo, true
	case err != nil || last == "":
		return "", "", false
	case missing == "" && real != p && fsview.IsWithin(p, real):
		return last, real, true
	}
	return "", "", false
}

// crosses reports whether s's path p is to be ignored because of crossing,
// and warns (once per symlink and entry) when it is.
func (b *builder) crosses(s spelled, p string) bool {
	link, to, found := b.crossing(p)
	if !found {
		return false
	}
	key := s.field + "\x00" + link
	if !b.warned[key] {
		b.warned[key] = true
		b.warn("%s %q is ignored where it passes through the symlink %s, which leads to %s, at or above itself: a deny there would hide everything beneath it; remove the link, or name the directory you mean", s.field, s.entry, link, to)
	}
	return true
}

// isLink reports whether p itself is a symlink.
func (b *builder) isLink(p string) bool {
	fi, err := b.in.FS.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}
