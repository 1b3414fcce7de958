package seccomp

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// seccompData mirrors struct seccomp_data.
type seccompData struct {
	nr   uint32
	arch uint32
	ip   uint64
	args [6]uint64
}

// bytes lays d out little-endian, as both supported architectures do.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], d.nr)
	binary.LittleEndian.PutUint32(b[4:], d.arch)
	binary.LittleEndian.PutUint64(b[8:], d.ip)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// run interprets prog over d the way the kernel's seccomp BPF would, for the
// instructions Build emits (32-bit absolute loads, conditional jumps against
// a constant, AND with a constant, BPF_JA, constant returns). Anything else, a jump past the end,
// a misaligned or out-of-range load, or falling off the end is an error.
func run(prog []unix.SockFilter, d seccompData) (uint32, error) {
	data := d.bytes()
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if in.K%4 != 0 || in.K+4 > uint32(len(data)) {
				return 0, fmt.Errorf("pc %d: load from offset %d", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_RET | unix.BPF_K:
			return in.K, nil
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(in.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K,
			unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch in.Code & 0xf0 {
			case unix.BPF_JEQ:
				taken = acc == in.K
			case unix.BPF_JGT:
				taken = acc > in.K
			case unix.BPF_JGE:
				taken = acc >= in.K
			case unix.BPF_JSET:
				taken = acc&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			return 0, fmt.Errorf("pc %d: unsupported opcode %#x", pc, in.Code)
		}
		if pc+1 >= len(prog) {
			return 0, fmt.Errorf("pc %d: jump or fall past the end (%d instructions)", pc, len(prog))
		}
	}
	return 0, fmt.Errorf("empty program")
}
