package limits

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// Prober finds what this machine offers. Its fields are the files it
// reads; empty ones are the real files.
type Prober struct {
	// ProcSelf is /proc/self.
	ProcSelf string
}

// Probe is the Offer of this machine for a backend that gives the sandbox
// a user namespace (userns) and mounts TMPDIR's filesystem (tmpfs).
// needMemory and needPids say which controllers the limits want: a
// cgroup is looked for only when one is wanted.
func (p Prober) Probe(userns, tmpfs, needMemory, needPids bool) Offer {
	o := Offer{Root: os.Getuid() == 0, UserNamespace: userns, Tmpfs: tmpfs, NprocPerNamespace: kernelAtLeast(5, 14)}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		o.RAM = uint64(si.Totalram) * uint64(si.Unit)
	}
	if needMemory || needPids {
		o.Cgroup, o.NoCgroup = p.cgroup(needMemory, needPids)
	}
	return o
}

// cgroup finds the caller's cgroup v2 directory and what srt may do there:
// make the leaf in it when it has the controllers in its subtree_control
// (or srt may enable them: only where it holds no process, or it is the
// root), or move srt, alone in it, into a leaf of its own first.
func (p Prober) cgroup(needMemory, needPids bool) (*Cgroup, string) {
	self := p.ProcSelf
	if self == "" {
		self = "/proc/self"
	}
	rel, err := unifiedPath(filepath.Join(self, "cgroup"))
	if err != nil {
		return nil, err.Error()
	}
	mnt, err := unifiedMount(filepath.Join(self, "mountinfo"))
	if err != nil {
		return nil, err.Error()
	}
	if filepath.Base(rel) == selfLeaf(os.Getpid()) {
		// An earlier command of this srt moved it (and its helpers)
		// into a leaf of their own: the leaves go beside it.
		rel = filepath.Dir(rel)
	}
	dir := filepath.Join(mnt, rel)
	available := words(filepath.Join(dir, "cgroup.controllers"))
	var want []string
	if needMemory {
		want = append(want, "memory")
	}
	if needPids {
		want = append(want, "pids")
	}
	for _, c := range want {
		if !slices.Contains(available, c) {
			return nil, fmt.Sprintf("the %s controller is not available in cgroup %s", c, dir)
		}
	}
	if unix.Access(dir, unix.W_OK) != nil || unix.Access(filepath.Join(dir, "cgroup.subtree_control"), unix.W_OK) != nil {
		return nil, fmt.Sprintf("cgroup %s is not delegated to this user", dir)
	}
	cg := &Cgroup{Dir: dir, Memory: needMemory, Pids: needPids}
	enabled := words(filepath.Join(dir, "cgroup.subtree_control"))
	for _, c := range want {
		if !slices.Contains(enabled, c) {
			cg.Enable = append(cg.Enable, c)
		}
	}
	if len(cg.Enable) == 0 || rel == "/" {
		return cg, ""
	}
	// Controllers can be enabled only for a cgroup without processes:
	// srt moves itself out first, with its helpers (srt-proxy, the
	// decider), when they are the only ones there.
	for _, p := range words(filepath.Join(dir, "cgroup.procs")) {
		if !ours(p) {
			return nil, fmt.Sprintf("cgroup %s holds other processes than srt, so srt cannot enable %s for a child of it", dir, strings.Join(cg.Enable, " and "))
		}
	}
	cg.MoveSelf = true
	return cg, ""
}

// ours reports whether the process pid is srt or one it started (its
// descendants: srt-proxy, the decider).
func ours(pid string) bool {
	self := os.Getpid()
	n, err := strconv.Atoi(pid)
	for range 64 {
		if err != nil || n <= 1 {
			return false
		}
		if n == self {
			return true
		}
		n, err = parent(n)
	}
	return false
}

// parent is the parent of the process pid, from /proc/<pid>/stat (the
// field after the command's name, which ends at the last ')').
func parent(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return strconv.Atoi(f[1])
}

// unifiedPath is the cgroup v2 path of /proc/<pid>/cgroup's "0::" line.
func unifiedPath(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "0::"); ok && strings.HasPrefix(rest, "/") {
			return filepath.Clean(strings.TrimSuffix(rest, " (deleted)")), nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}

// unifiedMount is where the cgroup v2 hierarchy is mounted, its root
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside cgroup v1).
func unifiedMount(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	ms, err := initstage.ParseMountinfo(bufio.NewReader(f))
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		if m.FSType == "cgroup2" && m.Root == "/" && !m.ReadOnly {
			return m.MountPoint, nil
		}
	}
	return "", errors.New("no writable cgroup v2 hierarchy is mounted")
}

// words are the space-separated words of a file (nil when it cannot be
// read).
func words(file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// kernelAtLeast reports whether the running kernel is at least
// major.minor.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	f := strings.FieldsFunc(rel, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(f[0])
	mi, _ := strconv.Atoi(f[1])
	return ma > major || ma == major && mi >= minor
}
