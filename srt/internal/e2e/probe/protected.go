//go:build linux

package main

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Attacks that plant what a later host program runs: a git redirection or
// hook, a start-up file, a file put in place of a protected name
// (srt/internal/e2e/escape_git_test.go, escape_home_test.go,
// escape_names_test.go).
func init() {
	// plant PATH CONTENT: make PATH's directory (mkdir -p), then append
	// CONTENT to PATH, creating it executable if it is missing.
	register("plant", 2, func(a []string) {
		if !report("mkdir", os.MkdirAll(filepath.Dir(a[0]), 0o755)) {
			return
		}
		putFile("plant", a[0], a[1], os.O_APPEND)
	})
	// replace PATH CONTENT: remove PATH, then create a new file there.
	register("replace", 2, func(a []string) {
		report("unlink", unix.Unlink(a[0]))
		putFile("create", a[0], a[1], os.O_EXCL)
	})
}

// putFile opens path for writing with flag added (O_APPEND, O_TRUNC or
// O_EXCL), creating it executable if it is missing, writes content and
// reports the whole as one step.
func putFile(step, path, content string, flag int) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, 0o755)
	if err == nil {
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	report(step, err)
}
