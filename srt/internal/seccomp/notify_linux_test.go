package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestBuildNotify runs the supervisor's program on each case: the named
// calls notify (sendto only with an address, tested on both words of the
// pointer), everything else is allowed, a foreign ABI fails with ENOSYS.
func TestBuildNotify(t *testing.T) {
	calls := []Notify{{Syscall: "connect"}, {Syscall: "sendto", NonNull: true, Arg: 4}, {Syscall: "sendmsg"}, {Syscall: "sendmmsg"}}
	for _, a := range arches {
		prog, err := BuildNotify(a, calls)
		if err != nil {
			t.Fatal(err)
		}
		nr := func(name string) uint32 { return sysnum[name][a.column] }
		for _, c := range []struct {
			name string
			d    seccompData
			want uint32
		}{
			{"connect", seccompData{nr: nr("connect"), arch: a.audit}, unix.SECCOMP_RET_USER_NOTIF},
			{"sendmsg", seccompData{nr: nr("sendmsg"), arch: a.audit}, unix.SECCOMP_RET_USER_NOTIF},
			{"sendmmsg", seccompData{nr: nr("sendmmsg"), arch: a.audit}, unix.SECCOMP_RET_USER_NOTIF},
			{"sendto NULL", seccompData{nr: nr("sendto"), arch: a.audit}, unix.SECCOMP_RET_ALLOW},
			{"sendto low word", seccompData{nr: nr("sendto"), arch: a.audit, args: [6]uint64{4: 0x1000}}, unix.SECCOMP_RET_USER_NOTIF},
			{"sendto high word only", seccompData{nr: nr("sendto"), arch: a.audit, args: [6]uint64{4: 1 << 32}}, unix.SECCOMP_RET_USER_NOTIF},
			{"socket", seccompData{nr: nr("socket"), arch: a.audit}, unix.SECCOMP_RET_ALLOW},
			{"foreign", seccompData{nr: nr("connect"), arch: 0x40000003}, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		} {
			got, err := run(prog, c.d)
			if err != nil {
				t.Fatalf("%s %s: %v", a, c.name, err)
			}
			if got != c.want {
				t.Errorf("%s %s: got %#x, want %#x", a, c.name, got, c.want)
			}
		}
	}
	if _, err := BuildNotify(ArchAMD64, nil); err != ErrNoRules {
		t.Errorf("no calls: %v, want ErrNoRules", err)
	}
	if _, err := BuildNotify(ArchAMD64, []Notify{{Syscall: "connect"}, {Syscall: "connect"}}); err == nil {
		t.Error("a call named twice was accepted")
	}
}
