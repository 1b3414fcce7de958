package e2e

import (
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var int80 struct {
	once sync.Once
	ok   bool
	why  string
}

// hostInt80 says whether this machine runs i386 system calls made with
// int 0x80 from 64-bit code at all, outside any sandbox: a getpid through
// it. Some kernels (IA32 emulation off) and hypervisors fault every int
// 0x80 (SIGSEGV); there the i386 probes have nothing to try, and each
// test that skips them says so.
func hostInt80(t *testing.T) bool {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		return false
	}
	int80.once.Do(func() {
		out, err := exec.Command("python3", "-c", `
import ctypes, mmap, os
page = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS|0x40, prot=7)
page[0:10] = bytes([0x53, 0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0x5b, 0xc3])
addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
pid = os.fork()
if pid == 0:
    os._exit(0 if ctypes.CFUNCTYPE(ctypes.c_int)(addr)() == os.getpid() else 1)
_, st = os.waitpid(pid, 0)
print("signal %d" % os.WTERMSIG(st) if os.WIFSIGNALED(st) else "exit %d" % os.WEXITSTATUS(st))
`).CombinedOutput()
		int80.why = strings.TrimSpace(string(out))
		int80.ok = err == nil && int80.why == "exit 0"
		if err != nil {
			int80.why += " " + err.Error()
		}
	})
	if !int80.ok {
		t.Logf("NOT EXERCISED here: the i386 probes (int 0x80): this machine runs no i386 system call outside the sandbox either (a getpid through int 0x80: %s)", int80.why)
	}
	return int80.ok
}
