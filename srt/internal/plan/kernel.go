package plan

import (
	"fmt"
	"io/fs"
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
// So /sys is read-only in every mode, and so is /proc beyond the sandbox's
// own processes:
//
//   - As root, /proc is read-only as a whole. uid 0 inside owns every global
//     entry: it could write any whose owner may, and chmod on a /proc entry
//     changes its mode for every reader on the host (chmod 0444 /proc/kcore,
//     chmod 0 /proc/meminfo). Covering the ~50 entries one by one would add
//     ~10 ms to every start; one remount costs one mount. The command's own
//     /proc/<pid>/ files (oom_score_adj, comm of another thread) are
//     read-only too.
//   - As another user, the global entries belong to someone else: a command
//     can write one only through its "other" bits, or beneath a directory.
//     Those are bound read-only over themselves, one by one, and the
//     command's own /proc/<pid>/ files stay writable.
//
// bubblewrap resolves a bind's source on the host: the covers bind the
// host's /proc entries, which show the same kernel objects (a sysctl's value
// is the reader's namespace's). Landlock cannot tell a process's own
// /proc/<pid>/ from the rest (it names existing directories only, and those
// of processes yet to start do not exist), so it keeps /proc as a write root
// and these mounts are the barrier.

// procEntry is how the sandbox shows one top-level /proc entry srt knows.
type procEntry struct {
	view View // HostRO: bound read-only; NullFile: masked
	why  string
}

// procTable names the top-level /proc entries srt knows, with the reason for
// each. An entry not in it is covered by the general rule of procCover.
var procTable = map[string]procEntry{
	"sys":           {HostRO, "sysctls: their checks compare the uid with the host's root (kernel.core_pattern runs a helper as host root)"},
	"sysrq-trigger": {HostRO, "one write reboots, crashes or freezes the host"},
	"irq":           {HostRO, "interrupt affinity of the host's CPUs"},
	"bus":           {HostRO, "PCI configuration space and input devices"},
	"fs":            {HostRO, "filesystem driver settings (ext4, nfsd, xfs)"},
	"driver":        {HostRO, "driver state (rtc, nvram)"},
	"acpi":          {HostRO, "ACPI wakeup devices and events"},
	"tty":           {HostRO, "tty drivers and line disciplines"},
	"scsi":          {HostRO, "a write to scsi/scsi adds or removes host devices"},
	"sysvipc":       {HostRO, "System V IPC tables"},
	"pressure":      {HostRO, "a write arms a trigger on the host's pressure stall counters"},
	"mtrr":          {HostRO, "memory type ranges of the host's CPUs"},
	"keys":          {NullFile, "lists the keys of every keyring the reader may view, the caller's user keyring among them"},
	"key-users":     {NullFile, "key counts and quotas of every uid with keys on the host"},
	"kcore":         {NullFile, "the host's memory as an ELF core"},
	"timer_list":    {NullFile, "every pending timer on the host, with its owner's pid and name"},
	"timer_stats":   {NullFile, "host timer statistics, with pids and names"},
	"sched_debug":   {NullFile, "every task on the host, with pid and name"},
	"latency_stats": {NullFile, "host latency records, with call stacks"},
	"kpagecount":    {NullFile, "physical page use, an aid to Rowhammer and side channels"},
	"kpageflags":    {NullFile, "physical page flags, an aid to Rowhammer and side channels"},
	"kpagecgroup":   {NullFile, "physical page owners, an aid to side channels"},
}

// kernelMounts adds the covers of /sys and of /proc.
func (b *builder) kernelMounts() error {
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
		// user other than root cannot write the entries that matter; root
		// keeps the covers (and srt refuses the setting for root).
		b.note("allowNestedUserNamespaces: /proc's global entries are left uncovered, so a nested sandbox can mount a fresh /proc; as uid %d the command can write there only what any user can (its own namespaces' sysctls, pressure triggers)", b.in.UID)
		return nil
	}
	b.p.ProcReadOnly = root
	ents, err := b.in.FS.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("listing /proc to cover its global entries: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if isPID(name) || e.Type()&fs.ModeSymlink != 0 {
			continue // a process's own directory; self, thread-self, net, mounts
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		if view, why, ok := b.procCover(name, fi.Mode()); ok {
			b.p.Kernel = append(b.p.Kernel, Mount{Path: "/proc/" + name, View: view, Why: why})
		}
	}
	return nil
}

// procCover decides how the sandbox shows the top-level /proc entry name,
// whose mode is mode (every one belongs to the host's root).
func (b *builder) procCover(name string, mode fs.FileMode) (View, string, bool) {
	root := b.in.UID == 0
	known, inTable := procTable[name]
	if inTable && known.view == NullFile && !mode.IsDir() {
		if root || mode&0o004 != 0 {
			return NullFile, known.why, true
		}
		return 0, "", false // unreadable to the command anyway
	}
	if root {
		return 0, "", false // /proc is read-only as a whole
	}
	why := known.why
	switch {
	case !mode.IsDir() && mode&0o002 == 0:
		return 0, "", false // writable by its owner only
	case inTable:
	case mode.IsDir():
		why = "a kernel directory srt has no entry for"
	default:
		why = "a kernel file anyone may write, srt has no entry for"
	}
	return HostRO, why, true
}

func isPID(name string) bool {
	return name != "" && strings.Trim(name, "0123456789") == ""
}

// underKernelFS reports whether p is /proc, /sys or beneath them: no rule
// makes them writable.
func underKernelFS(p string) bool {
	return underProc(p) || p == "/sys" || strings.HasPrefix(p, "/sys/")
}
