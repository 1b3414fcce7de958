//go:build linux

package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The kernel's own files: /proc's global entries and /sys. Their writes
// change the running kernel for the whole host, and many of their checks
// compare the caller's uid with the host's root, which uid 0 inside a
// root-run sandbox is. None of these tests writes a byte to a kernel file:
// a file counts as writable when open(O_WRONLY) succeeds.

// kernelModes are the settings that change how /, /proc and /sys are
// mounted: a read-only root, a writable root (allowWrite "/"), no
// filesystem rules at all, and the host's /proc bound in.
var kernelModes = []struct{ name, settings string }{
	{"default", fsSettings(writeCwd)},
	{"root-writable", fsSettings(`{"denyRead":[],"allowWrite":["/"],"denyWrite":[]}`)},
	{"filesystem-disabled", fsSettings(`{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]}`)},
	{"weaker-nested", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":` + writeCwd + `,"enableWeakerNestedSandbox":true}`},
}

// procPIDFile matches a file of a process's own /proc directory.
var procPIDFile = regexp.MustCompile(`^/proc/([0-9]+)/`)

// writables returns the files a kernel-walk opened for writing.
func (p probeRun) writables() []string {
	var out []string
	for _, line := range strings.Split(p.stdout, "\n") {
		if f, ok := strings.CutPrefix(line, "WRITABLE "); ok {
			out = append(out, f)
		}
	}
	return out
}

// TestEscapeKernelFilesWalk walks /proc and /sys inside the sandbox, in
// every mode, and tries open(O_WRONLY) on every regular file. /proc is
// read-only as a whole, for root and for a user, so nothing opens at all:
// no sysctl, no sysrq-trigger, no irq, bus or pressure file, nothing of
// /sys, and not even the command's own /proc/<pid>/ files. Controls: with
// allowNestedUserNamespaces a user's /proc is left as bubblewrap mounts it,
// and there the same walk finds the command's own /proc/<pid>/ files
// writable (and nothing else); outside srt it finds kernel files writable.
func TestEscapeKernelFilesWalk(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		for _, m := range kernelModes {
			p := w.probe(m.settings, "kernel-walk", "/proc", "/sys")
			want(t, p, "walk", "ok")
			procs := p.procs()
			own := 0
			for _, f := range p.writables() {
				pid := procPIDFile.FindStringSubmatch(f)
				switch {
				case pid == nil:
					t.Errorf("ESCAPE (%s): %s opens for writing inside the sandbox", m.name, f)
				case m.name == "weaker-nested":
					// The host's /proc, with every host process: what
					// enableWeakerNestedSandbox gives up (docs/security.md).
					// Each process's attr/* and timerslack_ns are mode 0666
					// and checked at write(2) (the caller must be that task,
					// or hold CAP_SYS_NICE over it), so they open for anyone;
					// the runner's own host processes' files open too.
					own++
				case procs[pid[1]] == "":
					t.Errorf("ESCAPE (%s): %s belongs to a process the probe did not see: %v", m.name, f, procs)
				default:
					own++
				}
			}
			if own > 0 {
				t.Errorf("%s: /proc is read-only, yet %d of its files opened for writing", m.name, own)
			}
			t.Logf("%s: %d per-process files writable; %s", m.name, own, noteLine(p, "walk:"))
		}

		// Control: a user's /proc under allowNestedUserNamespaces, which srt
		// leaves as bubblewrap mounts it, shows the walk finds what is
		// writable there: the command's own /proc/<pid>/ files, the
		// sysctls of the sandbox's own namespaces (IPC, mqueue, PID: their
		// checks ask for the owner of the namespace, which the command is)
		// and pressure triggers, as docs/security.md says; nothing else.
		if w.r.uid != 0 && !skipPart(t, "nested") {
			nested := withTop(fsSettings(writeCwd), `"allowNestedUserNamespaces":true`)
			p := w.probe(nested, "kernel-walk", "/proc", "/sys")
			want(t, p, "walk", "ok")
			own := 0
			for _, f := range p.writables() {
				pid := procPIDFile.FindStringSubmatch(f)
				switch {
				case pid != nil && p.procs()[pid[1]] != "":
					own++
				case pid == nil && (strings.HasPrefix(f, "/proc/sys/kernel/") || strings.HasPrefix(f, "/proc/sys/fs/mqueue/") || strings.HasPrefix(f, "/proc/pressure/")):
					t.Logf("nested: %s (the sandbox's own namespace, or a pressure trigger)", f)
				default:
					t.Errorf("ESCAPE (nested): %s opens for writing inside the sandbox", f)
				}
			}
			if own == 0 {
				t.Errorf("control: with /proc left writable the walk found none of the command's own files writable; is the walk broken?\n%s", p.result)
			}
		}

		// Control: the same walk, outside srt, of /proc/sys in a fresh proc
		// the probe mounts itself in namespaces of its own, with no covers:
		// what bubblewrap's --proc alone leaves. As root the host's
		// kernel.core_pattern opens for writing there.
		c := w.hostProbe("fresh-proc-walk")
		want(t, c, "fresh-proc-namespaces", "ok", "mount-proc", "ok", "walk", "ok")
		found := strings.Join(c.writables(), "\n")
		if found == "" {
			t.Fatalf("control: the walk of a fresh /proc/sys found nothing writable\n%s", c.result)
		}
		if w.r.uid == 0 && !strings.Contains(found+"\n", "/proc/sys/kernel/core_pattern\n") {
			t.Fatalf("control: as root, kernel/core_pattern of a fresh /proc is not writable\n%s", c.result)
		}
	})
}

// noteLine returns the first NOTE line of p that starts with prefix.
func noteLine(p probeRun, prefix string) string {
	for _, line := range strings.Split(p.stdout, "\n") {
		if n, ok := strings.CutPrefix(line, "NOTE "+prefix); ok {
			return strings.TrimSpace(prefix + n)
		}
	}
	return ""
}

// TestEscapeCorePattern is the finding itself: a root-run command wrote
// "|/path/helper" to kernel.core_pattern, and the next crash ran the
// helper as root on the host. The probe only opens the file for writing
// (and sets the mode it has); it never writes it. As root that fails with
// EROFS in every mode; as a user the kernel refuses it first (EACCES),
// as it does outside.
func TestEscapeCorePattern(t *testing.T) {
	const corePattern = "/proc/sys/kernel/core_pattern"
	forEach(t, func(t *testing.T, w *workspace) {
		for _, m := range kernelModes {
			p := w.probe(m.settings, "kernel-file", corePattern)
			open := "EACCES"
			if w.r.uid == 0 {
				open = refused("EROFS")
			}
			want(t, p, "open-write@"+corePattern, open)
			if got := p.steps["chmod-same@"+corePattern]; got == "ok" {
				t.Errorf("ESCAPE (%s): chmod of %s succeeded", m.name, corePattern)
			}
		}
		// Control: outside the sandbox root opens it for writing.
		if w.r.uid == 0 {
			want(t, w.hostProbe("kernel-file", corePattern), "open-write@"+corePattern, "ok")
		}
	})
}

// TestEscapeProcChmod: uid 0 inside owns every global /proc entry, and
// chmod on one changes its mode for every reader on the host (chmod 0444
// /proc/kpageflags, chmod 0 /proc/meminfo). /proc is read-only (EROFS) for
// every user. The probe sets the mode the file has.
func TestEscapeProcChmod(t *testing.T) {
	const version = "/proc/version"
	forEach(t, func(t *testing.T, w *workspace) {
		for _, m := range kernelModes {
			p := w.probe(m.settings, "kernel-file", version)
			want(t, p, "chmod-same@"+version, refused("EROFS")) // as a user the kernel would say EPERM first, were /proc writable
		}
		// Control: outside the sandbox root may chmod it (to its own mode).
		if w.r.uid == 0 {
			want(t, w.hostProbe("kernel-file", version), "chmod-same@"+version, "ok")
		}
	})
}

// rootWritableSysFile returns a /sys file the host's root may write, for
// the /sys tests, or "" when the machine has none of these.
func rootWritableSysFile() string {
	for _, f := range []string{
		"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/power/state", "/sys/kernel/uevent_helper",
		"/sys/kernel/mm/ksm/run", "/sys/module/printk/parameters/time",
	} {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o200 != 0 {
			return f
		}
	}
	return ""
}

// TestEscapeSysWritableRoot: with the root bound writable (allowWrite "/",
// filesystem.disabled) /sys would be bound writable with it; srt binds it
// read-only over itself, and an allowWrite naming it grants nothing.
func TestEscapeSysWritableRoot(t *testing.T) {
	f := rootWritableSysFile()
	if f == "" {
		t.Skip("no root-writable file of the ones this test knows under /sys on this machine")
	}
	forEach(t, func(t *testing.T, w *workspace) {
		grant := fsSettings(`{"denyRead":[],"allowWrite":["/","/sys","/proc/sys"],"denyWrite":[]}`)
		p := w.probe(grant, "kernel-file", f)
		if w.r.uid == 0 {
			want(t, p, "open-write@"+f, refused("EROFS"), "chmod-same@"+f, refused("EROFS"))
		} else {
			want(t, p, "open-write@"+f, "EACCES")
		}
		expect(t, p.result, 0, "/proc and /sys are read-only in every sandbox, so the entry grants nothing")
		for _, m := range kernelModes {
			p := w.probe(m.settings, "kernel-file", f)
			if got := p.steps["open-write@"+f]; got == "ok" {
				t.Errorf("ESCAPE (%s): %s opens for writing", m.name, f)
			}
		}
		// Control: outside the sandbox root opens it for writing.
		if w.r.uid == 0 {
			want(t, w.hostProbe("kernel-file", f), "open-write@"+f, "ok")
		}
	})
}
