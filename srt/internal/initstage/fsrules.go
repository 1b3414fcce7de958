package initstage

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
)

// FSRules are what the filesystem observer (Spec.ObserveFD) needs of the
// plan to tell a refused access from an allowed one: the view of "/" and of
// every path the plan mounts something on, as the plan's Writable and
// Readable read them. srt writes them to a memory file (Encode), which the
// init stage reads (DecodeFSRules): a plan may mount thousands of paths,
// more than an argv should carry.
type FSRules struct {
	Root   byte // a View* byte
	Guards []Guard
}

// Guard is one path the plan mounts something on, and what it shows.
type Guard struct {
	Path string // absolute, clean
	View byte
}

// The views an observer tells apart (plan.View, reduced).
const (
	ViewWritable byte = 'w' // the host's file, writable
	ViewReadOnly byte = 'r' // the host's file, read-only
	ViewHidden   byte = 'h' // hidden: an empty directory, or /dev/null
)

// ownTrees are the sandbox's own filesystems, which no rule of the
// settings covers: bubblewrap's /dev (TMPDIR is /dev/shm) and /proc. A
// write there is the kernel's to refuse or not, never reported.
var ownTrees = []string{"/dev", "/proc"}

// maxRulesSize bounds the memory file the init stage reads.
const maxRulesSize = 64 << 20

// Encode lays the rules out as the init stage reads them: the root's view,
// then per guard its view, its path and a NUL (a path holds no NUL).
func (r *FSRules) Encode() []byte {
	var b bytes.Buffer
	b.WriteByte(r.Root)
	for _, g := range r.Guards {
		b.WriteByte(g.View)
		b.WriteString(g.Path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// DecodeFSRules reads what Encode wrote.
func DecodeFSRules(data []byte) (*FSRules, error) {
	if len(data) == 0 || len(data) > maxRulesSize {
		return nil, errors.New("filesystem rules: bad size")
	}
	r := &FSRules{Root: data[0]}
	if !validView(r.Root) {
		return nil, errors.New("filesystem rules: bad view of /")
	}
	for rest := data[1:]; len(rest) > 0; {
		end := bytes.IndexByte(rest, 0)
		if end < 2 || !validView(rest[0]) || rest[1] != '/' {
			return nil, errors.New("filesystem rules: bad entry")
		}
		r.Guards = append(r.Guards, Guard{View: rest[0], Path: filepath.Clean(string(rest[1:end]))})
		rest = rest[end+1:]
	}
	return r, nil
}

func validView(v byte) bool { return v == ViewWritable || v == ViewReadOnly || v == ViewHidden }

// Refused says whether the rules refuse a write (write) or a read of the
// absolute, clean path p: the deepest guard at or above p decides, and
// with none, the root. A write is refused anywhere but on a writable view;
// a read only on a hidden one. Nothing in the sandbox's own /dev and /proc
// is refused.
func (r *FSRules) Refused(p string, write bool) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, t := range ownTrees {
		if within(p, t) {
			return false
		}
	}
	view, depth := r.Root, 0
	for _, g := range r.Guards {
		if len(g.Path) >= depth && within(p, g.Path) {
			view, depth = g.View, len(g.Path)
		}
	}
	if write {
		return view != ViewWritable
	}
	return view == ViewHidden
}

// Hides says whether any path is hidden: reads can be refused at all.
func (r *FSRules) Hides() bool {
	for _, g := range r.Guards {
		if g.View == ViewHidden {
			return true
		}
	}
	return false
}

func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
