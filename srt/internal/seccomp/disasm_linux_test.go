package seccomp

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// disasm renders prog one instruction per line, in the spirit of bpf_dbg and
// libseccomp's pseudo-filter output: absolute jump targets, and comments
// naming the seccomp_data field in A, the syscall compared, the argument
// constant and the action returned.
func disasm(a Arch, prog []unix.SockFilter) string {
	names := map[uint32]string{}
	for name, nums := range sysnum {
		names[nums[a.column]] = name
	}
	// state[pc] says what A holds on entry to pc; all jumps go forward, so
	// one pass in order sees every predecessor first.
	state := make([]accState, len(prog)+256)
	var b strings.Builder
	for pc, in := range prog {
		st := state[pc]
		var text, note string
		jt, jf := st, st
		switch {
		case in.Code == unix.BPF_LD|unix.BPF_W|unix.BPF_ABS:
			text = fmt.Sprintf("ld   [%d]", in.K)
			st.field = fieldName(in.K)
			note = "A = " + st.field
			jt, jf = st, st
		case in.Code == unix.BPF_ALU|unix.BPF_AND|unix.BPF_K:
			text = fmt.Sprintf("and  #%#x", in.K)
			st.field = fmt.Sprintf("%s & %#x", st.field, in.K)
			note = "A = " + st.field
			jt, jf = st, st
		case in.Code&0x07 == unix.BPF_JMP && in.Code&0xf0 != unix.BPF_JA:
			op := map[uint16]string{unix.BPF_JEQ: "jeq", unix.BPF_JGT: "jgt", unix.BPF_JGE: "jge", unix.BPF_JSET: "jset"}[in.Code&0xf0]
			k := fmt.Sprintf("%#x", in.K)
			switch {
			case st.field == "arch":
				note = archName(in.K)
			case st.field == "nr" && op == "jset":
				note = "x32 ABI"
			case st.field == "nr":
				k, note = fmt.Sprint(in.K), names[in.K]
				jt.syscall = names[in.K]
			default:
				if op == "jeq" {
					k = fmt.Sprint(in.K)
				}
				note = argName(st.syscall, st.field, in.K)
			}
			text = fmt.Sprintf("%-4s #%s, %d, %d", op, k, pc+1+int(in.Jt), pc+1+int(in.Jf))
		case in.Code == unix.BPF_RET|unix.BPF_K:
			text = fmt.Sprintf("ret  #%#x", in.K)
			note = actionName(in.K)
		default:
			text = fmt.Sprintf("code=%#x jt=%d jf=%d k=%#x", in.Code, in.Jt, in.Jf, in.K)
			note = "UNKNOWN"
		}
		if in.Code&0x07 == unix.BPF_JMP {
			state[pc+1+int(in.Jt)].merge(jt)
			state[pc+1+int(in.Jf)].merge(jf)
		} else if in.Code&0x07 != unix.BPF_RET {
			state[pc+1].merge(st)
		}
		line := fmt.Sprintf("%04d: %-28s ; %s", pc, text, note)
		b.WriteString(strings.TrimRight(line, " ;") + "\n")
	}
	return b.String()
}

// accState is what the disassembler knows about A: the field loaded and the
// syscall whose number was last matched on the way here.
type accState struct {
	set            bool
	field, syscall string
}

func (s *accState) merge(in accState) {
	switch {
	case !s.set:
		*s = in
		s.set = true
	case s.field != in.field || s.syscall != in.syscall:
		*s = accState{set: true, field: "?", syscall: "?"}
	}
}

func fieldName(off uint32) string {
	switch {
	case off == offNr:
		return "nr"
	case off == offArch:
		return "arch"
	case off >= offArgs && (off-offArgs)%8 == 0:
		return fmt.Sprintf("low32(args[%d])", (off-offArgs)/8)
	}
	return fmt.Sprintf("data[%d]", off)
}

func archName(k uint32) string {
	switch k {
	case unix.AUDIT_ARCH_X86_64:
		return "AUDIT_ARCH_X86_64"
	case unix.AUDIT_ARCH_AARCH64:
		return "AUDIT_ARCH_AARCH64"
	}
	return ""
}

func argName(syscall, field string, k uint32) string {
	bits := func(flags []bitName) string {
		var names []string
		for _, f := range flags {
			if k&f.bit != 0 {
				names = append(names, f.name)
			}
		}
		return strings.Join(names, "|")
	}
	setID := []bitName{{0o4000, "S_ISUID"}, {0o2000, "S_ISGID"}}
	create := []bitName{{0o100, "O_CREAT"}, {0o20000000, "__O_TMPFILE"}}
	switch syscall {
	case "socket":
		return map[uint32]string{unix.AF_UNIX: "AF_UNIX", unix.AF_VSOCK: "AF_VSOCK"}[k]
	case "socketpair":
		if field == "low32(args[0])" {
			return map[uint32]string{unix.AF_UNIX: "AF_UNIX"}[k]
		}
		return map[uint32]string{unix.SOCK_STREAM: "SOCK_STREAM", unix.SOCK_SEQPACKET: "SOCK_SEQPACKET"}[k]
	case "clone", "unshare":
		return bits([]bitName{{unix.CLONE_NEWNS, "CLONE_NEWNS"}, {unix.CLONE_NEWUSER, "CLONE_NEWUSER"}})
	case "ioctl":
		return map[uint32]string{tiocsti: "TIOCSTI", tioclinux: "TIOCLINUX"}[k]
	case "chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mknod", "mknodat":
		return bits(setID)
	case "open", "openat":
		// the flags come first: open(path, flags, mode), openat(dirfd, path, flags, mode)
		if field == "low32(args[1])" && syscall == "open" || field == "low32(args[2])" && syscall == "openat" {
			return bits(create)
		}
		return bits(setID)
	}
	return ""
}

type bitName struct {
	bit  uint32
	name string
}

func actionName(k uint32) string {
	switch k & unix.SECCOMP_RET_ACTION_FULL {
	case unix.SECCOMP_RET_ALLOW:
		return "ALLOW"
	case unix.SECCOMP_RET_ERRNO:
		return "ERRNO(" + unix.ErrnoName(unix.Errno(k&unix.SECCOMP_RET_DATA)) + ")"
	}
	return fmt.Sprintf("action %#x", k)
}
