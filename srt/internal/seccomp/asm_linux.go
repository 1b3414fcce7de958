package seccomp

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// maxInsns is the kernel's limit on a classic BPF program (BPF_MAXINSNS).
const maxInsns = 4096

// asm is a tiny forward-only assembler: conditional jumps name labels, which
// finish resolves to the 8-bit relative offsets classic BPF uses.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	pc     int
	jt, jf string // "" means the next instruction
}

func (p *asm) stmt(code uint16, k uint32) {
	p.prog = append(p.prog, unix.SockFilter{Code: code, K: k})
}

// jump emits "if A <op> k goto jt else goto jf" with op one of BPF_JEQ,
// BPF_JGT, BPF_JGE, BPF_JSET.
func (p *asm) jump(op uint16, k uint32, jt, jf string) {
	p.fixups = append(p.fixups, fixup{pc: len(p.prog), jt: jt, jf: jf})
	p.stmt(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (p *asm) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.prog)
}

func (p *asm) finish() ([]unix.SockFilter, error) {
	if len(p.prog) > maxInsns {
		return nil, fmt.Errorf("program has %d instructions, limit %d", len(p.prog), maxInsns)
	}
	for _, f := range p.fixups {
		jt, err := p.offset(f.pc, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := p.offset(f.pc, f.jf)
		if err != nil {
			return nil, err
		}
		p.prog[f.pc].Jt, p.prog[f.pc].Jf = jt, jf
	}
	return p.prog, nil
}

func (p *asm) offset(pc int, label string) (uint8, error) {
	if label == "" {
		return 0, nil
	}
	target, ok := p.labels[label]
	if !ok {
		return 0, fmt.Errorf("instruction %d: undefined label %q", pc, label)
	}
	off := target - pc - 1
	if off < 0 || off > 255 {
		return 0, fmt.Errorf("instruction %d: jump to %q spans %d, outside 0..255", pc, label, off)
	}
	return uint8(off), nil
}
