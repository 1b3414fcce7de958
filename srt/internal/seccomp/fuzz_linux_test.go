package seccomp

import (
	"sort"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzProgram runs random seccomp_data through every generated program and
// checks that the interpreter never fails (no bad opcode, no jump out of range,
// no falling off the end), that a foreign ABI is never allowed, that a blocked
// syscall with the blocking value in the low word is never allowed, and that
// the answer is the one the independent model gives.
//
// optSel's low five bits select the options (1 unix sockets, 2 namespaces,
// 4 terminal injection, 8 keyrings, 16 set-id), so every combination is
// reached, the empty one too.
// pick steers half the inputs onto a syscall the model knows, with the native
// arch value, so the rules are exercised and not only the default path.
func FuzzProgram(f *testing.F) {
	f.Add(uint8(0), uint8(3), uint8(0x80), uint32(41), uint32(unix.AUDIT_ARCH_X86_64), uint64(1), uint64(0))
	f.Add(uint8(0), uint8(3), uint8(0x80), uint32(272), uint32(unix.AUDIT_ARCH_X86_64), uint64(0xffffffff_10000000), uint64(0))
	f.Add(uint8(0), uint8(1), uint8(0x80), uint32(0x40000029), uint32(unix.AUDIT_ARCH_X86_64), uint64(1), uint64(0))
	f.Add(uint8(1), uint8(2), uint8(0x80), uint32(220), uint32(unix.AUDIT_ARCH_AARCH64), uint64(0x20000), uint64(0))
	f.Add(uint8(1), uint8(3), uint8(0x80), uint32(281), uint32(unix.AUDIT_ARCH_ARM), uint64(1), uint64(0))
	f.Add(uint8(0), uint8(3), uint8(0x80), uint32(102), uint32(unix.AUDIT_ARCH_I386), uint64(1), uint64(0))
	f.Add(uint8(0), uint8(3), uint8(5), uint32(0), uint32(0), uint64(0x1_00000001), uint64(0))
	f.Add(uint8(0), uint8(4), uint8(0x80), uint32(16), uint32(unix.AUDIT_ARCH_X86_64), uint64(0), uint64(0x5412))
	f.Add(uint8(0), uint8(7), uint8(0x80), uint32(16), uint32(unix.AUDIT_ARCH_X86_64), uint64(0), uint64(0xffffffff_00005412))
	f.Add(uint8(1), uint8(4), uint8(0x80), uint32(29), uint32(unix.AUDIT_ARCH_AARCH64), uint64(1), uint64(0x1_0000541c))
	f.Add(uint8(1), uint8(5), uint8(0x80), uint32(29), uint32(unix.AUDIT_ARCH_AARCH64), uint64(0), uint64(0x5401))
	f.Add(uint8(0), uint8(4), uint8(0x80), uint32(54), uint32(unix.AUDIT_ARCH_I386), uint64(0), uint64(0x5412))
	f.Add(uint8(0), uint8(6), uint8(0x80), uint32(0x40000202), uint32(unix.AUDIT_ARCH_X86_64), uint64(0), uint64(0x5412))
	f.Add(uint8(1), uint8(4), uint8(0x80), uint32(54), uint32(unix.AUDIT_ARCH_ARM), uint64(0), uint64(0x5412))
	f.Fuzz(func(t *testing.T, archSel, optSel, pick uint8, nr, arch uint32, arg0, arg1 uint64) {
		a := arches[int(archSel)%len(arches)]
		o := Options{BlockUnixSockets: optSel&1 != 0, BlockNamespaces: optSel&2 != 0,
			BlockTerminalInjection: optSel&4 != 0, BlockKeyrings: optSel&8 != 0, BlockSetID: optSel&16 != 0}
		prog, err := Build(a, o)
		if o == (Options{}) {
			if err == nil {
				t.Fatal("empty options built a program")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if pick&0x80 == 0 {
			names := knownNames(a)
			nr = modelNums[a.name][names[int(pick)%len(names)]]
			arch = a.audit
		}
		d := seccompData{nr: nr, arch: arch, args: [6]uint64{arg0, arg1, arg0 >> 7, arg1 << 3, ^arg0, ^arg1}}
		got, err := run(prog, d)
		if err != nil {
			t.Fatalf("%s %+v: %v", a, o, err)
		}
		if arch != a.audit && got == retAllow {
			t.Fatalf("%s: foreign arch %#x allowed", a, arch)
		}
		if a == ArchAMD64 && nr&0x40000000 != 0 && got == retAllow {
			t.Fatalf("x32 nr %#x allowed", nr)
		}
		if arch == a.audit && blockedByLowWord(a, o, nr, uint32(arg0), uint32(arg1)) && got == retAllow {
			t.Fatalf("%s %+v: blocked nr %d with args[0]=%#x args[1]=%#x allowed", a, o, nr, arg0, arg1)
		}
		if want := model(a, o, d); got != want {
			t.Fatalf("%s %+v nr=%d arch=%#x args[0]=%#x args[1]=%#x: got %s, model says %s",
				a, o, nr, arch, arg0, arg1, actionName(got), actionName(want))
		}
	})
}

// blockedByLowWord reports whether a native call must be refused: its number is
// one a selected rule names and, for argument rules, the low word of the
// argument tested (low0 or low1) carries the value.
func blockedByLowWord(a Arch, o Options, nr, low0, low1 uint32) bool {
	n := modelNums[a.name]
	if o.BlockUnixSockets {
		if nr == n["socket"] && (low0 == unix.AF_UNIX || low0 == unix.AF_VSOCK) ||
			nr == n["socketpair"] && low0 == unix.AF_UNIX && (low1&0xf == unix.SOCK_DGRAM || low1&0xf == unix.SOCK_RAW) {
			return true
		}
	}
	if o.BlockUnixSockets || o.BlockSetID {
		if nr == n["io_uring_setup"] || nr == n["io_uring_enter"] || nr == n["io_uring_register"] {
			return true
		}
	}
	if o.BlockKeyrings && (nr == n["keyctl"] || nr == n["add_key"] || nr == n["request_key"]) {
		return true
	}
	if o.BlockSetID && nr == n["fchmod"] && low1&0o6000 != 0 {
		return true
	}
	if o.BlockNamespaces {
		if (nr == n["unshare"] || nr == n["clone"]) && low0&(unix.CLONE_NEWUSER|unix.CLONE_NEWNS) != 0 {
			return true
		}
		for _, s := range []string{"clone3", "setns", "mount", "umount2", "pivot_root", "open_tree",
			"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "open_tree_attr"} {
			if nr == n[s] {
				return true
			}
		}
	}
	if o.BlockTerminalInjection && nr == n["ioctl"] && (low1 == reqTIOCSTI || low1 == reqTIOCLINUX) {
		return true
	}
	return false
}

func knownNames(a Arch) []string {
	var names []string
	for name := range modelNums[a.name] {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
