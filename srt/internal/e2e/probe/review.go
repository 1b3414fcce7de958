//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Attacks of the independent review (srt/internal/e2e/escape_review_test.go):
// planting files and links a later run or a later host program trusts, and
// filling the working directory so that a later run's walks give up.
func init() {
	// write-file PATH CONTENT: create (or truncate) PATH and write CONTENT.
	register("write-file", 2, func(a []string) { putFile("create", a[0], a[1], os.O_TRUNC) })
	// plant-link TARGET LINK: make LINK a symlink to TARGET.
	register("plant-link", 2, func(a []string) { report("plant-link", unix.Symlink(a[0], a[1])) })
	// fill DIR N: create DIR and N empty files in it.
	register("fill", 2, func(a []string) { fill(a[0], a[1], "") })
	// fill-dirs DIR N NAME: create DIR and N directories in it, each
	// holding an empty file NAME.
	register("fill-dirs", 3, func(a []string) { fill(a[0], a[1], a[2]) })
}

// fill makes n entries in dir: empty files, or directories holding an
// empty file named inner.
func fill(dir, count, inner string) {
	n, err := strconv.Atoi(count)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fill: bad count", count)
		os.Exit(2)
	}
	if !report("fill-mkdir", os.MkdirAll(dir, 0o755)) {
		return
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, "e"+strconv.Itoa(i))
		if inner == "" {
			err = os.WriteFile(p, nil, 0o644)
		} else if err = os.Mkdir(p, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(p, inner), nil, 0o644)
		}
		if err != nil {
			break
		}
	}
	report("fill", err)
}

func init() {
	// setid PATH: copy this probe to PATH and make it setuid and setgid,
	// by chmod; PATH+".creat" gets the bits from open(O_CREAT)'s mode.
	register("review-setid", 1, func(a []string) {
		self, err := os.ReadFile("/proc/self/exe")
		if !report("read-self", err) {
			return
		}
		if report("copy", os.WriteFile(a[0], self, 0o755)) {
			report("chmod-setid", unix.Chmod(a[0], 0o6755))
		}
		unix.Umask(0)
		fd, err := unix.Open(a[0]+".creat", unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o6755)
		if report("creat-setid", err) {
			unix.Write(fd, self)
			unix.Close(fd)
		}
	})
	// whoami: print the real and effective ids.
	register("whoami", 0, func([]string) {
		fmt.Printf("IDS uid=%d euid=%d gid=%d egid=%d\n", os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid())
	})
}

func init() {
	// sendto-stdin PATH: send a datagram to the Unix socket at PATH
	// through the socket the probe inherited as its standard input.
	register("sendto-stdin", 1, func(a []string) {
		report("sendto-stdin", unix.Sendto(0, []byte("PROBE-DGRAM"), 0, &unix.SockaddrUnix{Name: a[0]}))
	})
}
