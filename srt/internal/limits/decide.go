//go:build linux

package limits

import (
	"fmt"
	"strings"
	"time"

	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

// Offer is what the machine and the backend offer to enforce limits.
type Offer struct {
	// Cgroup is the cgroup v2 directory srt may make the sandbox's leaf
	// in, and which controllers the leaf can have; nil when there is
	// none (Probe says why in NoCgroup).
	Cgroup   *Cgroup
	NoCgroup string
	// Root: srt runs as uid 0 of the host, which the kernel exempts from
	// RLIMIT_NPROC.
	Root bool
	// UserNamespace: the backend gives the sandbox a user namespace of
	// its own (bubblewrap does; the Landlock backend does not).
	// NprocPerNamespace: the kernel counts RLIMIT_NPROC per user
	// namespace (Linux 5.14 and later). With both, RLIMIT_NPROC counts
	// the sandbox's own tasks; without, every task of the user on the
	// host.
	UserNamespace     bool
	NprocPerNamespace bool
	// Tmpfs: the backend mounts the filesystem of TMPDIR, and can size
	// it (bubblewrap; not the Landlock backend).
	Tmpfs bool
	// RAM is the machine's memory in bytes, for TMPDIR's default size.
	RAM uint64
}

// Cgroup is a cgroup v2 directory where srt may make a leaf.
type Cgroup struct {
	// Dir is where the leaf is made.
	Dir string
	// Memory and Pids: the leaf can have these controllers.
	Memory, Pids bool
	// Enable are the controllers srt must enable in Dir's
	// cgroup.subtree_control first ("memory", "pids").
	Enable []string
	// MoveSelf: Dir holds srt and its helpers alone, and no controller
	// can be enabled for a cgroup that holds a process: srt first moves
	// them into a cgroup of their own beside the leaves (selfLeaf).
	MoveSelf bool
}

// InitTasks is the room processes leaves for srt's own tasks inside the
// bound: the init stage's threads (seven when this was written) and
// bubblewrap. Both mechanisms count them with the command's.
const InitTasks = 16

// DefaultTmpdirMax is the largest default size of TMPDIR's filesystem.
const DefaultTmpdirMax = 4 << 30

// DefaultTmpdirBytes is TMPDIR's size without tmpdirMiB: a quarter of the
// machine's memory, at most 4 GiB (and 64 MiB when the memory is not
// known).
func DefaultTmpdirBytes(ram uint64) int64 {
	if ram == 0 {
		return 64 << 20
	}
	return int64(min(ram/4, DefaultTmpdirMax))
}

// Applied is how the limits are enforced.
type Applied struct {
	// CgroupMemory and CgroupPids are the leaf's memory.max and
	// pids.max; 0 is no limit, and both 0 is no leaf.
	CgroupMemory, CgroupPids int64
	// Rlimits are set on the command by the init stage.
	Rlimits []initstage.Rlimit
	// TmpdirBytes is the size of the filesystem of TMPDIR (0: the backend
	// mounts none).
	TmpdirBytes int64
	// Wall is how long srt lets the command run; 0 is no limit.
	Wall time.Duration
	// How says, one phrase per limit, how it is enforced (Describe).
	How []string
}

// Leaf reports whether the limits need a cgroup leaf.
func (a *Applied) Leaf() bool { return a.CgroupMemory > 0 || a.CgroupPids > 0 }

// Describe is the debug line: which limits are applied, and how.
func (a *Applied) Describe() string {
	return "limits: " + strings.Join(a.How, "; ")
}

// Error is a limit this machine cannot enforce. It wraps
// settings.ErrInvalid: the settings cannot be used here.
type Error struct {
	Key string // "limits.processes"
	Why string
}

func (e *Error) Error() string { return e.Key + ": " + e.Why }

// Unwrap makes an Error a settings error.
func (e *Error) Unwrap() error { return settings.ErrInvalid }

const mib = 1 << 20

// Decide picks how each limit of l is enforced with what o offers, or
// refuses the first that cannot be.
func Decide(l settings.Limits, o Offer) (*Applied, error) {
	a := &Applied{}
	cg := o.Cgroup
	if l.Processes > 0 {
		n := uint64(l.Processes + InitTasks)
		switch {
		case cg != nil && cg.Pids:
			a.CgroupPids = int64(n)
			a.How = append(a.How, fmt.Sprintf("processes %d: pids.max %d (with %d for srt's own) of cgroup %s", l.Processes, n, InitTasks, cg.Dir))
		case o.Root:
			return nil, &Error{"limits.processes", "no pids cgroup is delegated to srt here (" + o.NoCgroup + "), and the kernel does not apply RLIMIT_NPROC to root: run srt as a regular user, or inside a cgroup v2 with the pids controller it may use (systemd-run --scope -p Delegate=yes), or remove the limit"}
		case !o.UserNamespace || !o.NprocPerNamespace:
			return nil, &Error{"limits.processes", "no pids cgroup is delegated to srt here (" + o.NoCgroup + "), and RLIMIT_NPROC would count every process of this user on the host, not the sandbox's (" + nprocWhy(o) + "): run srt inside a cgroup v2 with the pids controller it may use (systemd-run --user --scope -p Delegate=yes), or remove the limit"}
		default:
			a.Rlimits = append(a.Rlimits, initstage.Rlimit{Name: "nproc", Cur: n, Max: n})
			a.How = append(a.How, fmt.Sprintf("processes %d: RLIMIT_NPROC %d (with %d for srt's own), counted in the sandbox's user namespace", l.Processes, n, InitTasks))
		}
	}
	if l.MemoryMiB > 0 {
		b := uint64(l.MemoryMiB) * mib
		if cg != nil && cg.Memory {
			a.CgroupMemory = int64(b)
			a.How = append(a.How, fmt.Sprintf("memoryMiB %d: memory.max (no swap) of cgroup %s, the whole sandbox", l.MemoryMiB, cg.Dir))
		} else {
			a.Rlimits = append(a.Rlimits, initstage.Rlimit{Name: "data", Cur: b, Max: b})
			a.How = append(a.How, fmt.Sprintf("memoryMiB %d: RLIMIT_DATA of each process (no memory cgroup: %s)", l.MemoryMiB, o.NoCgroup))
		}
	}
	switch {
	case !o.Tmpfs && l.TmpdirMiB > 0:
		return nil, &Error{"limits.tmpdirMiB", "this backend cannot mount a filesystem for TMPDIR, so nothing can bound its size: remove the limit"}
	case l.TmpdirMiB > 0:
		a.TmpdirBytes = int64(l.TmpdirMiB) * mib
		a.How = append(a.How, fmt.Sprintf("tmpdirMiB %d: the size of TMPDIR's tmpfs", l.TmpdirMiB))
	case o.Tmpfs:
		a.TmpdirBytes = DefaultTmpdirBytes(o.RAM)
		a.How = append(a.How, fmt.Sprintf("TMPDIR's tmpfs %d MiB (the default: a quarter of the memory, at most %d MiB)", a.TmpdirBytes/mib, DefaultTmpdirMax/mib))
	}
	if l.OpenFiles > 0 {
		n := uint64(l.OpenFiles)
		a.Rlimits = append(a.Rlimits, initstage.Rlimit{Name: "nofile", Cur: n, Max: n})
		a.How = append(a.How, fmt.Sprintf("openFiles %d: RLIMIT_NOFILE of each process", n))
	}
	if l.CPUSeconds > 0 {
		// SIGXCPU at the soft limit (a program may catch it and end
		// cleanly), SIGKILL a second later.
		n := uint64(l.CPUSeconds)
		a.Rlimits = append(a.Rlimits, initstage.Rlimit{Name: "cpu", Cur: n, Max: n + 1})
		a.How = append(a.How, fmt.Sprintf("cpuSeconds %d: RLIMIT_CPU of each process (SIGXCPU, then SIGKILL a second later)", n))
	}
	if l.WallSeconds > 0 {
		a.Wall = time.Duration(l.WallSeconds) * time.Second
		a.How = append(a.How, fmt.Sprintf("wallSeconds %d: srt stops the command (SIGTERM, SIGKILL %s later)", l.WallSeconds, WallGrace))
	}
	if len(a.How) == 0 {
		a.How = append(a.How, "none")
	}
	return a, nil
}

// WallGrace is how long srt waits after SIGTERM before it kills a command
// that ran past wallSeconds.
const WallGrace = 5 * time.Second

func nprocWhy(o Offer) string {
	if !o.UserNamespace {
		return "this backend gives the sandbox no user namespace"
	}
	return "this kernel, older than Linux 5.14, counts it per user, not per namespace"
}
