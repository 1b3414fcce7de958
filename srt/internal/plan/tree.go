package plan

import (
	"path/filepath"
	"sort"
	"strings"
)

// node is one path that some rule names.
type node struct {
	path  string
	isDir bool

	readDeny, readAllow   bool
	writeAllow, writeDeny bool
	// strongDeny is a credentials.files deny: no allow re-opens it.
	strongDeny bool
	// seal write-protects the node like writeDeny, except beneath a
	// reopen node: .git/modules is sealed, the git directories in it are
	// reopened.
	seal, reopen bool
	// pin makes the node a mount point even when its view is inherited.
	pin         bool
	placeholder bool
	// readablePlaceholder: a file placeholder reads as what srt wrote in
	// it (git opens these files and fails on EACCES), not as null.
	readablePlaceholder bool
	why                 []string
	// id is the file Build resolved a grant to, when a grant made the
	// node: the file that is bound (see Mount.Grant). A path swapped
	// between two looks is then refused, not granted as it is now.
	id       *FileID
	conflict bool
}

// identify records id as the node's file; a second, different identity
// (two grants that resolved the same path to different files, because it
// changed in between) leaves the node unidentifiable, which Build refuses.
func (n *node) identify(id *FileID) {
	switch {
	case id == nil:
	case n.id == nil && !n.conflict:
		n.id = id
	case n.id != nil && *n.id != *id:
		n.id, n.conflict = nil, true
	}
}

type tree struct {
	nodes map[string]*node
	root  *node
}

func newTree(rootWritable bool) *tree {
	r := &node{path: "/", isDir: true, writeAllow: rootWritable}
	return &tree{nodes: map[string]*node{"/": r}, root: r}
}

func (t *tree) get(p string, isDir bool) *node {
	if n, ok := t.nodes[p]; ok {
		return n
	}
	n := &node{path: p, isDir: isDir}
	t.nodes[p] = n
	return n
}

// ordered returns the nodes parents first (by depth, then by path).
func (t *tree) ordered() []*node {
	out := make([]*node, 0, len(t.nodes))
	for _, n := range t.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := depth(out[i].path), depth(out[j].path)
		if di != dj {
			return di < dj
		}
		return out[i].path < out[j].path
	})
	return out
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// ancestors calls f for the node at p and each ancestor node, nearest first,
// until f returns false.
func (t *tree) ancestors(p string, f func(*node) bool) {
	for {
		if n, ok := t.nodes[p]; ok && !f(n) {
			return
		}
		if p == "/" {
			return
		}
		p = filepath.Dir(p)
	}
}

// parentOf returns the nearest node strictly above n.
func (t *tree) parentOf(n *node) *node {
	var found *node
	t.ancestors(filepath.Dir(n.path), func(a *node) bool { found = a; return false })
	return found
}

// readable says whether p shows host content: the nearest read rule at or
// above p decides (an allow wins over a deny at the same path), and a strong
// deny at or above p always hides it.
func (t *tree) readable(p string) bool {
	decided, result := false, true
	t.ancestors(p, func(n *node) bool {
		if n.strongDeny {
			decided, result = true, false
			return false
		}
		if !decided {
			switch {
			case n.readAllow || n.writeAllow:
				decided, result = true, true
			case n.readDeny:
				decided, result = true, false
			}
		}
		return true
	})
	return result
}

// writable says whether p may be written: an allowWrite at or above it and
// no denyWrite at or above it (a seal counts as a deny unless a reopen lies
// between it and p).
func (t *tree) writable(p string) bool {
	allowed, denied, open := false, false, false
	t.ancestors(p, func(n *node) bool {
		if n.writeDeny || n.seal && !open {
			denied = true
			return false
		}
		if n.seal {
			open = false // a reopen lifts the one seal above it
		}
		open = open || n.reopen
		allowed = allowed || n.writeAllow
		return true
	})
	return allowed && !denied
}

// desired is the view a node should have.
func (t *tree) desired(n *node) View {
	switch {
	case n.placeholder && !n.isDir && !n.readablePlaceholder:
		return NullFile
	case n.placeholder:
		return HostRO
	case !t.readable(n.path) && n.isDir:
		return Empty
	case !t.readable(n.path):
		return NullFile
	case t.writable(n.path):
		return HostRW
	}
	return HostRO
}
