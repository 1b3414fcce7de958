package seccomp

import "testing"

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
