//go:build linux

package limits

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The probe finds the caller's cgroup v2 directory below the unified
// mount, and says what srt may do there, from the files the kernel shows
// (here, plain files in their places).
func TestProbeCgroup(t *testing.T) {
	root := t.TempDir()
	self, mnt := filepath.Join(root, "self"), filepath.Join(root, "unified")
	dir := filepath.Join(mnt, "user.slice", "run-1.scope")
	os.MkdirAll(self, 0o755)
	os.MkdirAll(dir, 0o755)
	put := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(self, "cgroup"), "4:memory:/x\n1:name=systemd:/\n0::/user.slice/run-1.scope\n")
	put(filepath.Join(self, "mountinfo"), "30 20 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n"+
		"31 30 0:27 / "+mnt+" rw,relatime - cgroup2 cgroup2 rw\n")
	put(filepath.Join(dir, "cgroup.controllers"), "cpu memory pids\n")
	put(filepath.Join(dir, "cgroup.subtree_control"), "")
	put(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid())+"\n")
	p := Prober{ProcSelf: self}

	cg, why := p.cgroup(true, true)
	if cg == nil || cg.Dir != dir || !cg.MoveSelf || len(cg.Enable) != 2 {
		t.Fatalf("alone in a delegated cgroup: %+v %q", cg, why)
	}
	put(filepath.Join(dir, "cgroup.subtree_control"), "memory pids\n")
	if cg, why = p.cgroup(true, true); cg == nil || cg.MoveSelf || len(cg.Enable) != 0 {
		t.Fatalf("controllers enabled: %+v %q", cg, why)
	}
	// srt's helpers (its children) are srt's to move.
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	put(filepath.Join(dir, "cgroup.subtree_control"), "")
	put(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(os.Getpid())+"\n"+strconv.Itoa(child.Process.Pid)+"\n")
	if cg, why = p.cgroup(true, true); cg == nil || cg.Dir != dir || !cg.MoveSelf {
		t.Fatalf("srt and its helpers: %+v %q", cg, why)
	}
	// Moved by an earlier command of this srt: the leaves go beside it.
	os.MkdirAll(filepath.Join(dir, selfLeaf(os.Getpid())), 0o755)
	put(filepath.Join(self, "cgroup"), "0::/user.slice/run-1.scope/"+selfLeaf(os.Getpid())+"\n")
	put(filepath.Join(dir, "cgroup.subtree_control"), "memory pids\n")
	if cg, why = p.cgroup(true, true); cg == nil || cg.Dir != dir || cg.MoveSelf || len(cg.Enable) != 0 {
		t.Fatalf("already moved: %+v %q", cg, why)
	}
	put(filepath.Join(self, "cgroup"), "4:memory:/x\n1:name=systemd:/\n0::/user.slice/run-1.scope\n")
	put(filepath.Join(dir, "cgroup.subtree_control"), "")
	put(filepath.Join(dir, "cgroup.procs"), "1\n"+strconv.Itoa(os.Getpid())+"\n")
	if cg, why = p.cgroup(true, false); cg != nil || why != "cgroup "+dir+" holds other processes than srt, so srt cannot enable memory for a child of it" {
		t.Fatalf("shared cgroup: %+v %q", cg, why)
	}
	put(filepath.Join(dir, "cgroup.controllers"), "cpu\n")
	if cg, why = p.cgroup(false, true); cg != nil || why != "the pids controller is not available in cgroup "+dir {
		t.Fatalf("no pids: %+v %q", cg, why)
	}
	put(filepath.Join(self, "cgroup"), "4:memory:/x\n")
	if cg, why = p.cgroup(true, true); cg != nil || why != "this process is in no cgroup v2" {
		t.Fatalf("cgroup v1 only: %+v %q", cg, why)
	}
}
