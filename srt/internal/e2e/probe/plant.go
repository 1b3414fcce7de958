//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// Attacks that plant something for a later run of srt to find: a symlink
// where srt takes a lock, a journal naming files for srt to delete, a
// program srt finds on PATH (srt's own state directory and the programs
// it runs, issue 10 items 6 and 11).
func init() {
	register("plant-symlink", 2, func(a []string) { report("symlink", unix.Symlink(a[0], a[1])) })
	// plant-file PATH CONTENT creates PATH (it must not exist) as an
	// executable file holding CONTENT.
	register("plant-file", 2, func(a []string) { report("create", plantFile(a[0], a[1])) })
}

func plantFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
