package fsview

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Mem is an in-memory FS for tests. Build it with NewMem.
type Mem struct {
	nodes map[string]*memNode
}

type memNode struct {
	mode     fs.FileMode
	target   string
	size     int64
	uid, gid uint32
	ino      uint64
	links    string // hard links, as the spec gave them ("": 1)
	data     string // a file's content
}

// memDev is the device number every Mem file reports.
const memDev = 0x5a

// NewMem builds a tree from a spec: each key is an absolute path; a value of
// "dir" makes a directory, "file" an empty regular file (mode 0644, or the
// octal mode given: "file 0200"), "text T" a regular file holding T, "links
// N" an empty regular file with N hard links, "-> T" a symlink to T,
// "socket" a Unix socket file, and "unreadable" a directory whose listing fails with EACCES. Parents are
// created as directories. Everything is owned by root (uid and gid 0), with
// modes 0755 (directories), 0644 (files) and 0777 (symlinks); Own and Chmod
// change that. Inode numbers follow the sorted paths, so they are the same in
// every run, and so are change times (the inode number, in seconds).
func NewMem(spec map[string]string) *Mem {
	m := &Mem{nodes: map[string]*memNode{"/": {mode: fs.ModeDir | 0o755}}}
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := filepath.Clean(k)
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			if _, ok := m.nodes[d]; !ok {
				m.nodes[d] = &memNode{mode: fs.ModeDir | 0o755}
			}
		}
		v := spec[k]
		switch {
		case v == "dir":
			m.nodes[p] = &memNode{mode: fs.ModeDir | 0o755}
		case v == "unreadable":
			m.nodes[p] = &memNode{mode: fs.ModeDir}
		case v == "file":
			m.nodes[p] = &memNode{mode: 0o644}
		case v == "socket":
			m.nodes[p] = &memNode{mode: fs.ModeSocket | 0o755}
		case strings.HasPrefix(v, "text "):
			data := strings.TrimPrefix(v, "text ")
			m.nodes[p] = &memNode{mode: 0o644, data: data, size: int64(len(data))}
		case strings.HasPrefix(v, "links "):
			links := strings.TrimPrefix(v, "links ")
			if _, err := strconv.ParseUint(links, 10, 16); err != nil {
				panic("fsview.NewMem: bad spec value " + v)
			}
			m.nodes[p] = &memNode{mode: 0o644, links: links}
		case strings.HasPrefix(v, "file 0"):
			mode, err := strconv.ParseUint(strings.TrimPrefix(v, "file "), 8, 12)
			if err != nil {
				panic("fsview.NewMem: bad mode in " + v)
			}
			m.nodes[p] = &memNode{mode: fs.FileMode(mode)}
		case strings.HasPrefix(v, "-> "):
			m.nodes[p] = &memNode{mode: fs.ModeSymlink | 0o777, target: strings.TrimPrefix(v, "-> ")}
		default:
			panic("fsview.NewMem: bad spec value " + v)
		}
	}
	all := make([]string, 0, len(m.nodes))
	for p := range m.nodes {
		all = append(all, p)
	}
	sort.Strings(all)
	for i, p := range all {
		m.nodes[p].ino = uint64(i + 1)
	}
	return m
}

// Own gives p and everything beneath it to uid and gid.
func (m *Mem) Own(p string, uid, gid int) *Mem {
	for q, n := range m.nodes {
		if IsWithin(q, p) {
			n.uid, n.gid = uint32(uid), uint32(gid)
		}
	}
	return m
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of p.
func (m *Mem) Chmod(p string, perm fs.FileMode) *Mem {
	n, ok := m.nodes[p]
	if !ok {
		panic("fsview.Mem.Chmod: no such path " + p)
	}
	n.mode = n.mode.Type() | perm
	return m
}

// Lstat implements FS.
func (m *Mem) Lstat(name string) (fs.FileInfo, error) {
	n, ok := m.nodes[name]
	if !ok {
		if parent, ok := m.nodes[filepath.Dir(name)]; ok && !parent.mode.IsDir() {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOTDIR}
		}
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return memInfo{name: filepath.Base(name), n: n}, nil
}

// ReadDir implements FS.
func (m *Mem) ReadDir(name string) ([]fs.DirEntry, error) {
	n, ok := m.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	if n.mode.Perm() == 0 {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	var out []fs.DirEntry
	for p, c := range m.nodes {
		if p != "/" && filepath.Dir(p) == name {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: filepath.Base(p), n: c}))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// ReadFile implements FS.
func (m *Mem) ReadFile(name string, max int) ([]byte, error) {
	real, err := Realpath(m, name)
	if err != nil {
		return nil, err
	}
	n := m.nodes[real]
	if !n.mode.IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EINVAL}
	}
	if len(n.data) > max {
		return []byte(n.data[:max]), nil
	}
	return []byte(n.data), nil
}

// Readlink implements FS.
func (m *Mem) Readlink(name string) (string, error) {
	n, ok := m.nodes[name]
	if !ok || n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
	}
	return n.target, nil
}

type memInfo struct {
	name string
	n    *memNode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.n.size }
func (i memInfo) Mode() fs.FileMode  { return i.n.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.n.mode.IsDir() }

// Sys returns a *syscall.Stat_t, as the host's Lstat does, with the
// owner, the mode bits, the device and the inode number filled in.
func (i memInfo) Sys() any {
	m := i.n.mode
	mode := uint32(m.Perm())
	switch {
	case m.IsDir():
		mode |= syscall.S_IFDIR
	case m&fs.ModeSymlink != 0:
		mode |= syscall.S_IFLNK
	case m&fs.ModeSocket != 0:
		mode |= syscall.S_IFSOCK
	default:
		mode |= syscall.S_IFREG
	}
	if m&fs.ModeSticky != 0 {
		mode |= syscall.S_ISVTX
	}
	if m&fs.ModeSetuid != 0 {
		mode |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		mode |= syscall.S_ISGID
	}
	st := newStat(mode, i.n.ino, i.n.uid, i.n.gid)
	if i.n.links != "" {
		fmt.Sscan(i.n.links, &st.Nlink) // Nlink's type differs between architectures
	}
	return st
}
