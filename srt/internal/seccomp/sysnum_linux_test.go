package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestSysnumMatchesXSys(t *testing.T) {
	a, ok := Native()
	if !ok {
		t.Skip("no seccomp program for this architecture")
	}
	for name, nums := range sysnum {
		want, ok := nativeSysnum[name]
		if !ok {
			t.Errorf("%s: missing from nativeSysnum", name)
			continue
		}
		if nums[a.column] != want {
			t.Errorf("%s on %s: table has %d, x/sys/unix has %d", name, a, nums[a.column], want)
		}
	}
}

// TestIoctlRequestsMatchXSys checks the request numbers the terminal rule
// writes out against x/sys/unix for the build architecture.
func TestIoctlRequestsMatchXSys(t *testing.T) {
	if _, ok := Native(); !ok {
		t.Skip("no seccomp program for this architecture")
	}
	if tiocsti != unix.TIOCSTI || tioclinux != unix.TIOCLINUX {
		t.Errorf("TIOCSTI %#x, TIOCLINUX %#x; x/sys/unix has %#x, %#x", tiocsti, tioclinux, unix.TIOCSTI, unix.TIOCLINUX)
	}
}
