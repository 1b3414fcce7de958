package seccomp

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regenerate the golden files with
//
//	go test ./srt/internal/seccomp -run TestGolden -update
//
// only after a deliberate change to the rule tables or to the program layout,
// and review the diff instruction by instruction: these files are the
// reviewed form of the filter. A diff you did not intend is a bug.
//
// Adding the terminal table (BlockTerminalInjection) changed none of the
// existing files: its rule comes after the other tables and is compiled only
// when selected, so unix, namespaces and both are byte for byte what they were.
// It added terminal (the option alone), unix-terminal, namespaces-terminal and
// all (every option), each for both architectures; "both" keeps its old
// meaning, the first two tables.
//
// Issue 10 changed unix (the datagram socketpair rule), moved io_uring to a
// table of its own that unix and setid both pull in, and added the keyring
// and set-id tables: keyrings, setid, and "srt" and "srt-unix-allowed" and
// "srt-nested", the three programs srt installs (every option; no unix;
// no namespaces). "all" is "srt".
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current programs")

var (
	arches = []Arch{ArchAMD64, ArchARM64}
	combos = []struct {
		name string
		opts Options
	}{
		{"unix", Options{BlockUnixSockets: true}},
		{"namespaces", Options{BlockNamespaces: true}},
		{"both", Options{BlockUnixSockets: true, BlockNamespaces: true}},
		{"terminal", Options{BlockTerminalInjection: true}},
		{"unix-terminal", Options{BlockUnixSockets: true, BlockTerminalInjection: true}},
		{"namespaces-terminal", Options{BlockNamespaces: true, BlockTerminalInjection: true}},
		{"all", Options{BlockUnixSockets: true, BlockNamespaces: true, BlockTerminalInjection: true, BlockKeyrings: true, BlockSetID: true}},
		{"keyrings", Options{BlockKeyrings: true}},
		{"setid", Options{BlockSetID: true}},
		{"srt-unix-allowed", Options{BlockNamespaces: true, BlockTerminalInjection: true, BlockKeyrings: true, BlockSetID: true}},
		{"srt-nested", Options{BlockUnixSockets: true, BlockTerminalInjection: true, BlockKeyrings: true, BlockSetID: true}},
		{"srt-unix-supervised", Options{SuperviseUnixSockets: true, BlockNamespaces: true, BlockTerminalInjection: true, BlockKeyrings: true, BlockSetID: true}},
	}
)

func TestGolden(t *testing.T) {
	for _, a := range arches {
		for _, c := range combos {
			t.Run(a.String()+"-"+c.name, func(t *testing.T) {
				prog, err := Build(a, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				got := disasm(a, prog)
				path := filepath.Join("testdata", a.String()+"-"+c.name+".golden")
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("program for %s differs from %s:\n%s", c.name, path, got)
				}
			})
		}
	}
}

func TestBuildRefusesEmptyOptions(t *testing.T) {
	for _, a := range arches {
		if _, err := Build(a, Options{}); !errors.Is(err, ErrNoRules) {
			t.Errorf("Build(%s, {}) error = %v, want ErrNoRules", a, err)
		}
	}
	if _, err := Build(Arch{}, Options{BlockNamespaces: true}); err == nil {
		t.Error("Build(zero Arch) succeeded")
	}
}

// TestProgramShape checks what the kernel's verifier and the layout promise:
// forward jumps inside the program, a RET at the end, the ABI check first.
func TestProgramShape(t *testing.T) {
	for _, a := range arches {
		for _, c := range combos {
			prog, err := Build(a, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for pc, in := range prog {
				if in.Code&0x07 == 0x05 { // BPF_JMP
					for _, off := range []uint8{in.Jt, in.Jf} {
						if pc+1+int(off) >= len(prog) {
							t.Errorf("%s/%s pc %d: jump past the end", a, c.name, pc)
						}
					}
				}
			}
			if last := prog[len(prog)-1]; last.Code != 0x06 { // BPF_RET|BPF_K
				t.Errorf("%s/%s: last instruction %#x is not RET", a, c.name, last.Code)
			}
			if prog[0].K != offArch || prog[1].K != a.audit {
				t.Errorf("%s/%s: program does not start with the arch check", a, c.name)
			}
		}
	}
}

// allTables are every rule table Build can select.
var allTables = [][]rule{unixSocketRules, ioUringRules, namespaceRules, terminalRules, keyringRules, setIDRules}

// TestEveryRuleHasBothNumbers checks each rule's numbers against the model's
// table; a syscall one architecture lacks is absent there, never 0.
func TestEveryRuleHasBothNumbers(t *testing.T) {
	for _, table := range allTables {
		for _, r := range table {
			nums, ok := sysnum[r.syscall]
			if !ok || nums[0] == 0 || nums[1] == 0 || nums[ArchAMD64.column] == absent {
				t.Errorf("rule %q: numbers %v", r.syscall, nums)
			}
			for _, a := range arches {
				want, ok := modelNums[a.name][r.syscall]
				if !ok {
					want = absent
				}
				if nums[a.column] != want {
					t.Errorf("%s %s = %d, independent table says %d", a, r.syscall, nums[a.column], want)
				}
			}
		}
	}
}

// TestAbsentSyscallsLeftOut: the arm64 program names none of the legacy
// syscalls (their x86-64 numbers mean other calls there), and its set-id
// rules still cover the *at forms.
func TestAbsentSyscallsLeftOut(t *testing.T) {
	prog, err := Build(ArchARM64, Options{BlockSetID: true})
	if err != nil {
		t.Fatal(err)
	}
	text := disasm(ArchARM64, prog)
	for _, name := range []string{"chmod", "creat", "open", "mknod"} {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasSuffix(line, "; "+name) {
				t.Errorf("arm64 program names %s: %s", name, line)
			}
		}
	}
	for _, name := range []string{"fchmodat", "openat", "mknodat"} {
		if !strings.Contains(text, "; "+name+"\n") {
			t.Errorf("arm64 program lacks %s", name)
		}
	}
}

// TestArgTestValid refuses argument tests the compiler cannot lay out.
func TestArgTestValid(t *testing.T) {
	bad := []argTest{
		{index: 6, mask: 1},
		{index: 0},
		{index: 0, anyOf: []uint32{1}, mask: 1},
		{index: 0, anyOf: []uint32{1}, noneOf: []uint32{2}},
		{index: 0, bits: 0xf, mask: 1},
	}
	for _, at := range bad {
		if _, err := compile(ArchAMD64, []rule{{syscall: "socket", args: []argTest{at}, errno: 1}}); err == nil {
			t.Errorf("%+v: compiled", at)
		}
	}
}
