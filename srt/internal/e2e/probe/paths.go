//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Attacks on how a path in the settings is resolved (issue 10, items 3, 7,
// 14, 18, 19, 21): a command that may write a directory plants symlinks
// there for the next run, or swaps a directory another sandbox is about to
// be granted for a symlink while that sandbox starts.
func init() {
	register("create", 1, func(a []string) { putFile("create", a[0], payload, os.O_TRUNC) })
	register("replace-by-symlink", 2, plantSymlink)
	register("exchange-loop", 4, exchangeLoop)
}

// plantSymlink replaces link by a symlink to target: an existing link is
// first moved aside to link.orig (step "move-aside", "none" when there was
// nothing), then the symlink is made (step "symlink").
func plantSymlink(a []string) {
	target, link := a[0], a[1]
	if _, err := os.Lstat(link); err == nil {
		if !report("move-aside", unix.Rename(link, link+".orig")) {
			return
		}
	} else {
		reportWord("move-aside", "none")
	}
	report("symlink", unix.Symlink(target, link))
}

// exchangeLoop swaps the names a and b with renameat2(RENAME_EXCHANGE) as
// fast as it can, for at most the given number of seconds, or until the
// file stop appears (checked every 256 swaps). It always stops on an even
// number of swaps, so a and b end as they began. Step "exchange": ok when
// every swap worked; a NOTE says how many were made.
func exchangeLoop(a []string) {
	x, y, stop := a[0], a[1], a[2]
	secs, err := strconv.Atoi(a[3])
	if err != nil {
		reportWord("exchange", "usage")
		return
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	n := 0
	for {
		if err := unix.Renameat2(unix.AT_FDCWD, x, unix.AT_FDCWD, y, unix.RENAME_EXCHANGE); err != nil {
			report("exchange", err)
			return
		}
		n++
		if n%256 == 0 {
			if _, err := os.Lstat(stop); err == nil || time.Now().After(deadline) {
				break
			}
		}
	}
	note("%d swaps of %s and %s", n, filepath.Base(x), filepath.Base(y))
	fmt.Println("RESULT exchange ok")
}
