//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Attacks on a file the settings deny reading: every way to name it that
// does not go through the path the plan masked.
func init() {
	register("read", 1, func(a []string) { readFile("read", a[0]) })
	register("read-symlink", 1, readSymlink)
	register("hardlink", 2, hardlink)
	register("read-proc-root", 2, func(a []string) {
		readFile("read-proc-root@"+a[0], "/proc/"+a[0]+"/root"+a[1])
	})
	register("read-proc-roots", 1, func(a []string) {
		for _, pid := range pids() {
			readFile("read-proc-root@"+strconv.Itoa(pid), "/proc/"+strconv.Itoa(pid)+"/root"+a[0])
		}
	})
}

// readFile reads path; what it got, if anything, goes on a DATA line so the
// test can check that the secret never shows up.
func readFile(name, path string) {
	data, err := os.ReadFile(path)
	if report(name, err) {
		printData(data)
	}
}

func printData(data []byte) {
	os.Stdout.WriteString("DATA ")
	os.Stdout.Write(data)
	os.Stdout.WriteString("\n")
}

// readSymlink makes a symlink to target in $TMPDIR and reads through it.
func readSymlink(a []string) {
	link := filepath.Join(os.TempDir(), "probe-symlink")
	os.Remove(link)
	if !report("symlink", os.Symlink(a[0], link)) {
		return
	}
	readFile("read-symlink", link)
}

// hardlink tries to make a hard link to target in dir; if the kernel lets
// it, it reads through the link.
func hardlink(a []string) {
	link := filepath.Join(a[1], "probe-hardlink")
	os.Remove(link)
	if !report("hardlink", unix.Link(a[0], link)) {
		return
	}
	defer os.Remove(link)
	readFile("read-hardlink", link)
}

// pids lists the processes this process can see in /proc, itself excluded.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}
