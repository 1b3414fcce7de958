package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Options selects which rule tables go into the program.
type Options struct {
	// socket(AF_UNIX/AF_VSOCK), datagram socketpair(AF_UNIX), and io_uring
	BlockUnixSockets bool
	// socket(AF_VSOCK) and io_uring alone: Unix sockets are allowed
	// because a second filter (BuildNotify) hands their connects and sends
	// to a supervisor (network.allowUnixSockets). Ignored with
	// BlockUnixSockets, which refuses more.
	SuperviseUnixSockets bool
	BlockNamespaces      bool // new user/mount namespaces, setns, mounts
	// ioctl(TIOCSTI) and ioctl(TIOCLINUX): input pushed into a terminal the
	// host reads (CVE-2017-5226); srt always sets it. See the package doc.
	BlockTerminalInjection bool
	// keyctl, add_key and request_key: the caller's keyrings; srt always
	// sets it.
	BlockKeyrings bool
	// set-user-ID and set-group-ID modes in chmod, open, mknod and their
	// kin, openat2 (ENOSYS), and io_uring; srt always sets it.
	BlockSetID bool
}

// ErrNoRules is returned by Build when Options selects nothing: the caller
// must decide to install no filter rather than install an empty one.
var ErrNoRules = errors.New("seccomp: no rules selected")

// Offsets into struct seccomp_data (include/uapi/linux/seccomp.h).
const (
	offNr   = 0
	offArch = 4
	offArgs = 16 // args[i] at 16+8*i; its low word first (little-endian)
)

// Build compiles the rules selected by o into a seccomp program for a. The
// program checks the ABI, then each rule in table order; any call no rule
// refuses is allowed.
func Build(a Arch, o Options) ([]unix.SockFilter, error) {
	if a.audit == 0 {
		return nil, fmt.Errorf("seccomp: build: unsupported architecture")
	}
	var rules []rule
	switch {
	case o.BlockUnixSockets:
		rules = append(rules, unixSocketRules...)
	case o.SuperviseUnixSockets:
		rules = append(rules, vsockRules...)
	}
	if o.BlockUnixSockets || o.SuperviseUnixSockets || o.BlockSetID {
		rules = append(rules, ioUringRules...)
	}
	if o.BlockNamespaces {
		rules = append(rules, namespaceRules...)
	}
	if o.BlockTerminalInjection {
		rules = append(rules, terminalRules...)
	}
	if o.BlockKeyrings {
		rules = append(rules, keyringRules...)
	}
	if o.BlockSetID {
		rules = append(rules, setIDRules...)
	}
	if len(rules) == 0 {
		return nil, ErrNoRules
	}
	prog, err := compile(a, rules)
	if err != nil {
		return nil, fmt.Errorf("seccomp: build %s: %w", a, err)
	}
	return prog, nil
}

// compile lays the program out as:
//
//	A = arch; if A != native: ENOSYS
//	A = nr;   if nr & x32 bit: ENOSYS            (x86-64 only)
//	per rule: if A == nr(rule) {
//	            per argument test: A = low32(arg) [& bits]; if !match: ALLOW
//	            ERRNO
//	          }
//	ALLOW
//	one RET per errno used
//
// A rule on a syscall the architecture lacks is left out.
func compile(a Arch, rules []rule) ([]unix.SockFilter, error) {
	var p asm
	enosys := errnoLabel(unix.ENOSYS)
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch)
	p.jump(unix.BPF_JEQ, a.audit, "", enosys)
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr)
	if a.x32Bit != 0 {
		p.jump(unix.BPF_JSET, a.x32Bit, enosys, "")
	}
	errnos := []unix.Errno{unix.ENOSYS}
	seen := map[string]bool{}
	for i, r := range rules {
		nums, ok := sysnum[r.syscall]
		if !ok {
			return nil, fmt.Errorf("rule %d: no number for syscall %q", i, r.syscall)
		}
		if seen[r.syscall] {
			// a second rule for the same number would never be reached
			return nil, fmt.Errorf("rule %d: syscall %q named twice", i, r.syscall)
		}
		seen[r.syscall] = true
		for _, t := range r.args {
			if err := t.valid(); err != nil {
				return nil, fmt.Errorf("rule %d (%s): %w", i, r.syscall, err)
			}
		}
		nr := nums[a.column]
		if nr == absent {
			continue
		}
		if !contains(errnos, r.errno) {
			errnos = append(errnos, r.errno)
		}
		deny := errnoLabel(r.errno)
		if len(r.args) == 0 {
			p.jump(unix.BPF_JEQ, nr, deny, "")
			continue
		}
		next := fmt.Sprintf("after-%d", i)
		p.jump(unix.BPF_JEQ, nr, "", next)
		for k, t := range r.args {
			// match: where a matching word goes, the next test or the errno
			match := deny
			if k < len(r.args)-1 {
				match = fmt.Sprintf("rule-%d-arg-%d", i, k+1)
			}
			t.emit(&p, match, fmt.Sprintf("rule-%d-allow-%d", i, k))
			if match != deny {
				p.label(match)
			}
		}
		p.label(next)
	}
	p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	for _, e := range errnos {
		p.label(errnoLabel(e))
		p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|(uint32(e)&unix.SECCOMP_RET_DATA))
	}
	return p.finish()
}

// emit loads the argument word and jumps to match when the test matches;
// otherwise it returns ALLOW (each syscall has one rule, so nothing later
// could refuse it). allow names the ALLOW of a noneOf test.
func (t *argTest) emit(p *asm, match, allow string) {
	p.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*t.index))
	if t.bits != 0 {
		p.stmt(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, t.bits)
	}
	switch {
	case len(t.anyOf) > 0:
		for _, v := range t.anyOf {
			p.jump(unix.BPF_JEQ, v, match, "")
		}
	case len(t.noneOf) > 0:
		for j, v := range t.noneOf {
			miss := ""
			if j == len(t.noneOf)-1 {
				miss = match
			}
			p.jump(unix.BPF_JEQ, v, allow, miss)
		}
		p.label(allow)
	default:
		p.jump(unix.BPF_JSET, t.mask, match, "")
	}
	p.stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
}

func (t *argTest) valid() error {
	if t.index < 0 || t.index > 5 {
		return fmt.Errorf("argument index %d out of range", t.index)
	}
	set := 0
	for _, b := range []bool{len(t.anyOf) > 0, len(t.noneOf) > 0, t.mask != 0} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("argument test needs exactly one of anyOf, noneOf and mask")
	}
	if t.bits != 0 && t.mask != 0 {
		return fmt.Errorf("argument test: bits go with anyOf or noneOf, not mask")
	}
	return nil
}

func errnoLabel(e unix.Errno) string { return "errno-" + unix.ErrnoName(e) }

func contains(list []unix.Errno, e unix.Errno) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}
