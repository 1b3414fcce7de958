//go:build linux

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel keyrings are not files: no mount hides them. A process keeps
// the session keyring it was started with across fork, exec and new
// namespaces unless it joins another one.
func init() {
	register("keyring", 1, func(a []string) {
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", a[0], 0)
		if !report("key-search", err) {
			return
		}
		buf := make([]byte, 4096)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if report("key-read", err) {
			printData(buf[:n])
		}
	})
	// with-key is the test's helper, not an attack: it runs a command (srt)
	// in a new session keyring that holds a user key.
	register("with-key", -1, func(a []string) {
		if len(a) < 3 {
			usage()
		}
		if _, err := unix.KeyctlJoinSessionKeyring("srt-escape"); err != nil {
			os.Stderr.WriteString("probe: join session keyring: " + err.Error() + "\n")
			os.Exit(2)
		}
		if _, err := unix.AddKey("user", a[0], []byte(a[1]), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			os.Stderr.WriteString("probe: add_key: " + err.Error() + "\n")
			os.Exit(2)
		}
		err := syscall.Exec(a[2], a[2:], os.Environ())
		os.Stderr.WriteString("probe: exec: " + err.Error() + "\n")
		os.Exit(2)
	})
}
