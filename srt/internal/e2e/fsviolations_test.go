//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// fsViolationRun runs srt with --report-filesystem-violations (when
// report), --show-violations and --violations-fd 3, and returns the run and
// what arrived on descriptor 3.
func (w *workspace) fsViolationRun(report bool, settingsJSON, command string) (result, string) {
	w.t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		w.t.Fatal(err)
	}
	defer pr.Close()
	args := []string{"-s", w.settings(settingsJSON), "--show-violations", "--violations-fd", "3"}
	if report {
		args = append(args, "--report-filesystem-violations")
	}
	got := make(chan string, 1)
	go func() { b, _ := io.ReadAll(pr); got <- string(b) }()
	r := w.passRun([]*os.File{pw}, append(args, "-c", command)...)
	pw.Close()
	return r, <-got
}

// block returns the <sandbox_violations> block of r's stderr ("" if none).
func block(r result) string {
	_, after, ok := strings.Cut(r.stderr, "<sandbox_violations>\n")
	if !ok {
		return ""
	}
	b, _, _ := strings.Cut(after, "</sandbox_violations>")
	return b
}

// TestFSViolations: with --report-filesystem-violations, each write the
// rules refuse (the read-only root, a denyWrite file, the mandatory denies
// .bashrc and .git/hooks) and each open of a path denyRead hides (a file, a
// name beneath a hidden directory) is a violation "deny <syscall> <path>"
// in the <sandbox_violations> block and on --violations-fd; writes the
// rules allow are not. Without the flag nothing is reported. The command's
// own errors are what they were.
func TestFSViolations(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.write("home/proj/locked.txt", "locked\n")
		w.write("home/proj/secret.txt", "s3cret\n")
		w.write("home/proj/vault/key", "k3y\n")
		w.mkdir("home/proj/.git/hooks")
		w.write("home/proj/.git/HEAD", "ref: refs/heads/main\n")
		settings := fsSettings(`{"denyRead":["secret.txt","vault"],"allowWrite":["."],"denyWrite":["locked.txt"]}`)
		command := `echo x > /etc/foo; echo y > locked.txt; echo z >> .bashrc; echo h > .git/hooks/pre-commit; ` +
			`cat secret.txt; cat vault/key; echo fine > allowed.txt; mkdir made; mv allowed.txt made/; echo done`
		d := w.dir
		want := []string{"deny openat /etc/foo", "deny openat " + d + "/locked.txt", "deny openat " + d + "/.bashrc",
			"deny openat " + d + "/.git/hooks/pre-commit", "deny openat " + d + "/secret.txt", "deny openat " + d + "/vault/key"}

		r, fd3 := w.fsViolationRun(true, settings, command)
		expect(t, r, 0, "done", "/etc/foo: "+refusedText("EROFS"), "!s3cret", "!k3y")
		got := block(r)
		for _, v := range want {
			if !strings.Contains(got, v+"\n") {
				t.Errorf("the block lacks %q:\n%s", v, r)
			}
			if !strings.Contains(fd3, `"line":"`+v+`"`) {
				t.Errorf("--violations-fd lacks %q:\n%s", v, fd3)
			}
		}
		var lines []string
		for _, line := range strings.Split(strings.TrimSpace(fd3), "\n") {
			var v struct{ Line, Command, Key string }
			if err := json.Unmarshal([]byte(line), &v); err != nil || v.Command != command || v.Key == "" {
				t.Errorf("--violations-fd line %q: %v, command %q, key %q", line, err, v.Command, v.Key)
			}
			lines = append(lines, v.Line)
		}
		if strings.Join(lines, "\n")+"\n" != got {
			t.Errorf("--violations-fd and the block differ:\n%s\n%s", fd3, got)
		}
		for _, bad := range []string{"allowed.txt", "made", "/dev/"} {
			if strings.Contains(got, bad) {
				t.Errorf("an allowed write (%s) was reported:\n%s", bad, got)
			}
		}
		if !exists(w.path("home/proj/made/allowed.txt")) {
			t.Errorf("the allowed writes did not happen")
		}

		// Without the flag: the same refusals, no violation.
		os.RemoveAll(w.path("home/proj/made"))
		r, fd3 = w.fsViolationRun(false, settings, command)
		expect(t, r, 0, "done", "/etc/foo: "+refusedText("EROFS"), "!deny openat", "!<sandbox_violations>")
		if fd3 != "" {
			t.Errorf("without the flag, --violations-fd got %q", fd3)
		}
	})
}

// TestFSViolationsAttribution: two commands at once through the library,
// each with its own id; each one's violations are its own.
func TestFSViolationsAttribution(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`))
		loop := func(name string) string {
			return `for i in 1 2 3 4 5 6 7 8; do echo x > /etc/` + name + `-$i; sleep 0.05; done; echo ended`
		}
		r := w.libhost(s, "-report-fs", "-parallel", "first|id-first-0123456789abcdef|"+loop("first"), "second|id-second-0123456789abcdef|"+loop("second"))
		expect(t, r, 0, "[first] exit=0", "[second] exit=0")
		for _, name := range []string{"first", "second"} {
			other := map[string]string{"first": "second", "second": "first"}[name]
			for i := 1; i <= 8; i++ {
				if v := "violation [" + name + "] deny openat /etc/" + name + "-" + itoa(i) + "\n"; !strings.Contains(r.stdout, v) {
					t.Errorf("missing %q:\n%s", v, r)
				}
			}
			if strings.Contains(r.stdout, "violation ["+name+"] deny openat /etc/"+other) {
				t.Errorf("a violation of %s was attributed to %s:\n%s", other, name, r)
			}
		}
		// Without the option, the library reports none.
		r = w.libhost(s, "-parallel", "first|id-first-0123456789abcdef|"+loop("first"))
		expect(t, r, 0, "[first] exit=0", "!violation")
	})
}

// TestEscapeFSViolationsHostile: a command that feeds the observer garbage
// — a path far past PATH_MAX, bytes that are no UTF-8, pointers to unmapped
// memory and to a string running into an unmapped page, a buffer another
// thread rewrites while the calls read it, thousands of refused writes at
// once (some of which the observer drops, its queue being bounded) —
// neither breaks the observer nor the command: the command's calls
// fail as the kernel says, it ends normally, and a refused write after all
// that is still reported. The non-UTF-8 path arrives sanitised.
func TestEscapeFSViolationsHostile(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		prog := `
import ctypes, mmap, os, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_openat = 257 if os.uname().machine == "x86_64" else 56
def openat(ptr, flags):
    return libc.syscall(ctypes.c_long(SYS_openat), ctypes.c_long(-100), ctypes.c_void_p(ptr), ctypes.c_long(flags), ctypes.c_long(0o644))
W = os.O_WRONLY | os.O_CREAT
# far past PATH_MAX, no NUL in the first 100000 bytes
long = ctypes.create_string_buffer(b"/etc/" + b"a" * 100000)
print("long", openat(ctypes.addressof(long), W), ctypes.get_errno())
# not UTF-8
try:
    os.open(b"/etc/\xff\xfe-bad", W)
except OSError as e:
    print("nonutf8", e.errno)
# unmapped memory, and a string that runs into an unmapped page
print("null", openat(0, W))
print("wild", openat(1, W))
m = mmap.mmap(-1, 2 * mmap.PAGESIZE)
m.write(b"/" * (2 * mmap.PAGESIZE))
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
libc.mprotect(ctypes.c_void_p(base + mmap.PAGESIZE), mmap.PAGESIZE, 0)
print("edge", openat(base + mmap.PAGESIZE - 16, W))
# a path another thread keeps rewriting
buf = ctypes.create_string_buffer(64)
stop = False
def flip():
    a, b = b"/etc/race-aaaaaaa\0", b"/dev/shm/ok-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\0"
    while not stop:
        ctypes.memmove(buf, a, len(a)); ctypes.memmove(buf, b, len(b))
t = threading.Thread(target=flip); t.start()
for i in range(2000):
    fd = openat(ctypes.addressof(buf), W)
    if fd >= 0: os.close(fd)
stop = True; t.join()
# a flood
for i in range(3000):
    try: os.open("/usr/flood-%d" % i, W)
    except OSError: pass
print("survived")
`
		settings := fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`)
		r, fd3 := w.fsViolationRun(true, settings, "python3 -c '"+prog+"' && sleep 1 && echo x > /etc/after-all-that; echo end")
		expect(t, r, 0, "survived", "end", "nonutf8 "+map[string]string{"EROFS": "30", "EACCES": "13"}[refused("EROFS")], "null -1", "wild -1", "edge -1")
		if !strings.Contains(block(r), "deny openat /etc/after-all-that\n") {
			t.Fatalf("the observer did not report a write after the garbage:\n%s", r)
		}
		if !strings.Contains(fd3, "deny openat /etc/\ufffd-bad\"") {
			t.Errorf("the non-UTF-8 path was not reported sanitised on --violations-fd:\n%.2000s", fd3)
		}
		if strings.Contains(fd3, "/etc/aaaa") {
			t.Errorf("a path beyond PATH_MAX was reported:\n%.2000s", fd3)
		}
		for _, line := range strings.Split(strings.TrimSpace(fd3), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("--violations-fd carries a line that is not JSON: %q", line)
			}
		}
	})
}

// TestFSViolationsWithUnixSockets: the observer and the Unix socket gate
// share the init stage's one supervisor (the kernel allows one listener):
// with both, a listed socket connects, an unlisted one is refused, and
// both kinds of violation are reported, each once.
func TestFSViolationsWithUnixSockets(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		socks := w.mkdir("socks")
		a, b := socks+"/a.sock", socks+"/b.sock"
		w.startUnixServer("s="+a, "s="+b)
		w.write("home/proj/client.py", unixClient)
		r := w.srt("-s", w.settings(unixSettings(writeCwd, a)), "--show-violations", "--report-filesystem-violations", "-c",
			"echo x > /etc/foo; python3 client.py c="+a+" c="+b+"; echo fine > ok.txt")
		expect(t, r, 0, "CONNECTED hello from "+a, "REFUSED "+b+" PermissionError 13")
		got := block(r)
		for _, v := range []string{"deny openat /etc/foo\n", "deny unix-connect " + b + "\n"} {
			if strings.Count(got, v) != 1 {
				t.Errorf("want %q once in the block:\n%s", v, r)
			}
		}
		if strings.Contains(got, "ok.txt") || strings.Contains(got, a+"\n") {
			t.Errorf("an allowed write or connect was reported:\n%s", r)
		}
	})
}
