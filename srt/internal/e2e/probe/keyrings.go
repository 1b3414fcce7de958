//go:build linux

package main

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// Attacks on the caller's user keyring (@u). A process finds it by its
// uid, not by inheritance, so a new session keyring does not hide it: the
// attack links it into the session keyring, which makes the caller its
// possessor, and reads a key of it by serial. The link goes into the
// probe's own process keyring, which dies with it: outside the sandbox,
// where the controls run the same code, it changes nothing else.
func init() {
	register("keyring-user", 1, func(a []string) {
		serial, err := strconv.Atoi(a[0])
		if err != nil {
			usage()
		}
		_, err = unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
		report("user-keyring", err)
		_, err = unix.KeyctlInt(unix.KEYCTL_LINK, unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_PROCESS_KEYRING, 0, 0)
		report("link-user", err)
		desc, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, serial)
		if report("describe", err) {
			note("describe: %s", desc)
		}
		buf := make([]byte, 4096)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, serial, buf, 0)
		if report("read-serial", err) {
			printData(buf[:n])
		}
		_, err = unix.AddKey("user", "srt-probe-key", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		report("add-key", err)
		_, err = unix.RequestKey("user", "srt-probe-no-such-key", "", unix.KEY_SPEC_PROCESS_KEYRING)
		report("request-key", err)
	})
}
