package plan

import (
	"io/fs"
	"sort"
	"strings"
)

// The kernel's own files in the sandbox. /proc and /sys are not the host's
// files in the usual sense: a write there changes the running kernel, for
// every process on the host, and many of their permission checks compare
// the caller's uid with the host's root, which uid 0 inside a root-run
// sandbox is (the user namespace maps it to itself). bubblewrap's --proc
// covers sys, sysrq-trigger, irq and bus only where access(W_OK) succeeds,
// and /proc/sys refuses that to everyone, so a root-run sandbox could write
// kernel.core_pattern and have a helper run as root on the host.
//
// So /sys is read-only in every mode, and so is /proc as a whole: one
// remount, for every user. Covering the global entries one by one costs a
// mount each (~50 of them as root, who owns every one: it could write any
// whose owner may, and chmod on a /proc entry changes its mode for every
// reader on the host, chmod 0 /proc/meminfo; ~10 as another user, for the
// directories and the anyone-writable files), and bubblewrap reads the
// mount table again for each: 2.3 ms more per start for a user's ten, where
// the remount costs 0.3 ms. The price is the command's own /proc/<pid>/
// files, read-only too (oom_score_adj, another thread's comm, /proc/<pid>/mem
// for a debugger, which falls back to ptrace); a write there fails with
// EROFS. The masks below hide what a read would leak.
//
// Landlock then grants nothing beneath /proc: nothing there is writable.
// Only allowNestedUserNamespaces, for a user other than root, leaves /proc
// as bubblewrap mounts it (a nested sandbox must mount a fresh /proc, which
// the kernel refuses while /proc has mounts over its entries); there the
// command can write what any user can (its own namespaces' sysctls,
// pressure triggers) and its own /proc/<pid>/ files, and Landlock's write
// limit is off anyway.
//
// bubblewrap resolves a bind's source on the host: the masks bind the
// host's /dev/null; --remount-ro changes only the sandbox's own /proc
// mount (or, under enableWeakerNestedSandbox, the host's /proc is bound
// read-only).

// procMasks are the top-level /proc files whose reading leaks the host's
// secrets or state past the sandbox's namespaces: each is masked with
// /dev/null (empty to read) where the command could read it. Writes are
// refused by the read-only /proc.
var procMasks = map[string]string{
	"keys":          "lists the keys of every keyring the reader may view, the caller's user keyring among them",
	"key-users":     "key counts and quotas of every uid with keys on the host",
	"kcore":         "the host's memory as an ELF core",
	"timer_list":    "every pending timer on the host, with its owner's pid and name",
	"timer_stats":   "host timer statistics, with pids and names",
	"sched_debug":   "every task on the host, with pid and name",
	"latency_stats": "host latency records, with call stacks",
	"kpagecount":    "physical page use, an aid to Rowhammer and side channels",
	"kpageflags":    "physical page flags, an aid to Rowhammer and side channels",
	"kpagecgroup":   "physical page owners, an aid to side channels",
}

// kernelMounts adds the covers of /sys and of /proc.
func (b *builder) kernelMounts() {
	// Under a read-only root, bubblewrap's recursive read-only bind already
	// makes /sys and every mount below it (cgroupfs, debugfs, tracefs,
	// securityfs, efivarfs) read-only.
	if b.p.Root == HostRW {
		b.p.Kernel = append(b.p.Kernel, Mount{Path: "/sys", View: HostRO,
			Why: "kernel objects: uid 0 inside owns them (power/state, cgroups, module parameters)"})
	}
	root := b.in.UID == 0
	if b.in.Config.AllowNestedUserNamespaces && !root {
		// A nested sandbox mounts a fresh /proc, which the kernel refuses
		// when /proc has mounts over its entries (mount_too_revealing). A
		// user other than root cannot write the entries that matter (and
		// srt refuses the setting for root).
		b.note("allowNestedUserNamespaces: /proc's global entries are left uncovered, so a nested sandbox can mount a fresh /proc; as uid %d the command can write there only what any user can (its own namespaces' sysctls, pressure triggers)", b.in.UID)
		return
	}
	b.p.ProcReadOnly = true
	// The read-only remount covers every write; only the masks are mounts
	// of their own, over the entries of procMasks this kernel has.
	names := make([]string, 0, len(procMasks))
	for name := range procMasks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fi, err := b.in.FS.Lstat("/proc/" + name)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue // not on this kernel
		}
		if view, why, ok := b.procCover(name, fi.Mode()); ok {
			b.p.Kernel = append(b.p.Kernel, Mount{Path: "/proc/" + name, View: view, Why: why})
		}
	}
}

// procCover decides how the sandbox shows the top-level /proc entry name,
// whose mode is mode (every one belongs to the host's root): masked when
// procMasks names it and the command could read it; otherwise the
// read-only /proc covers it.
func (b *builder) procCover(name string, mode fs.FileMode) (View, string, bool) {
	why, masked := procMasks[name]
	if masked && !mode.IsDir() && (b.in.UID == 0 || mode&0o004 != 0) {
		return NullFile, why, true
	}
	return 0, "", false
}

// underKernelFS reports whether p is /proc, /sys or beneath them: no rule
// makes them writable.
func underKernelFS(p string) bool {
	return underProc(p) || p == "/sys" || strings.HasPrefix(p, "/sys/")
}
