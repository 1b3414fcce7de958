//go:build linux

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// descendants are the processes below pid (children first, then theirs),
// read from /proc/<pid>/task/*/children.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 && len(out) < 1000 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob("/proc/" + itoa(p) + "/task/*/children")
		for _, tf := range tasks {
			b, _ := os.ReadFile(tf)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// alive reports whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// filesHolding are the files under root (not following symlinks) whose
// content holds any of values, and every non-directory entry as leftovers.
func filesHolding(t *testing.T, root string, values ...string) (holding, leftovers []string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		leftovers = append(leftovers, p)
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, v := range values {
			if strings.Contains(string(b), v) {
				holding = append(holding, p)
				break
			}
		}
		return nil
	})
	return holding, leftovers
}

// maskedFileRoutes is a script that tries every way of reading the file
// at path (in a writable directory) that the test can think of, printing
// what each finds: srt binds the masked copy over the real file, so every
// route must give the copy or fail.
func maskedFileRoutes(path string) string {
	dir, name := filepath.Dir(path), filepath.Base(path)
	return strings.Join([]string{
		`echo "== cat"; cat ` + path,
		`echo "== fd"; exec 3<` + path + `; cat /proc/self/fd/3; exec 3<&-`,
		`echo "== proc-root"; for p in /proc/[0-9]*; do cat "$p/root` + path + `" 2>/dev/null; done`,
		`echo "== openat"; python3 -c 'import os; d = os.open("` + dir + `", os.O_RDONLY | os.O_DIRECTORY); print(os.read(os.open("` + name + `", os.O_RDONLY, dir_fd=d), 1 << 20).decode())'`,
		`echo "== link"; ln ` + path + ` ` + dir + `/hard 2>&1; cat ` + dir + `/hard 2>&1`,
		`echo "== rename"; mv ` + path + ` ` + dir + `/moved 2>&1; rm -f ` + path + ` 2>&1`,
		`echo "== write"; echo overwritten 2>&1 >` + path + `; cat ` + path,
		`echo "== umount"; umount ` + path + ` 2>&1; cat ` + path,
		`echo "== mountinfo"; cat /proc/self/mountinfo`,
		// open_by_handle_at would reach the inode under the mount, by its
		// parent directory's handle; it needs CAP_DAC_READ_SEARCH.
		`echo "== handle"; python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8 + 128)
ctypes.c_uint.from_buffer(buf).value = 128
mid = ctypes.c_int()
if libc.name_to_handle_at(-100, b"` + dir + `", buf, ctypes.byref(mid), 0) != 0:
    print("name_to_handle_at:", os.strerror(ctypes.get_errno()))
else:
    fd = libc.open_by_handle_at(os.open("/", os.O_RDONLY), buf, os.O_RDONLY)
    print("open_by_handle_at:", os.strerror(ctypes.get_errno()) if fd < 0 else "opened %d" % fd)
EOF`,
		// Every regular file any process here holds open: the masked
		// copies (memfds are fine: they hold sentinels), never the real.
		`echo "== fds"; python3 -c '
import glob, os, stat
for f in glob.glob("/proc/[0-9]*/fd/*"):
    try:
        if stat.S_ISREG(os.stat(f).st_mode):
            print(f, os.readlink(f), open(f, "rb").read(1 << 20))
    except OSError as e:
        pass
'`,
		`echo "== end"`,
	}, "\n")
}

// TestMaskFile: a file in mode "mask", whole and with extract and
// maskDuplicates (the password is also in a comment, which extract does
// not match). Inside, cat shows the sentinels; every route to the real
// content gives the copy or fails (/proc/self/fd, /proc/<pid>/root, a
// directory fd, a hard link, rename, write, umount, a file handle, the
// open files of every process), and the output holds no real value. srt
// killed with SIGKILL while the command runs leaves nothing in TMPDIR:
// no file, and nothing holding the value.
//
// Not covered, as docs/credentials.md says: a hard link to the file made
// before the run, at another path (mask or deny that path too).
func TestMaskFile(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		pw, tok := secret("pw", 24), secret("tk", 32)
		netrc := w.write("home/proj/creds/netrc", "machine api.test\nlogin me\npassword "+pw+"\n# old: "+pw+"\n")
		tokFile := w.write("home/proj/creds/token", tok)
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["./creds"],"denyWrite":[]},` +
			`"credentials":{"allowPlaintextInject":true,"files":[{"path":"creds/netrc","mode":"mask","extract":"password\\s+(\\S+)","maskDuplicates":true},{"path":"` + tokFile + `","mode":"mask"}]}}`)
		r := w.srt("-s", s, "-c", maskedFileRoutes(netrc)+"\necho '== token'; cat "+tokFile+"; echo")
		expect(t, r, 0, "== end", "!"+pw, "!"+tok, "!WARNING")
		m := regexp.MustCompile(`== cat\nmachine api\.test\nlogin me\npassword (fake_value_\S+)\n# old: (fake_value_\S+)\n`).FindStringSubmatch(r.stdout)
		if m == nil || m[1] != m[2] {
			t.Fatalf("cat shows no copy with one sentinel for both occurrences of the password:\n%s", r)
		}
		checkSentinel(t, "the password's sentinel", m[1], pw)
		copy := "machine api.test\nlogin me\npassword " + m[1] + "\n# old: " + m[1] + "\n"
		out := r.stdout + r.stderr
		for _, want := range []string{
			"== fd\n" + copy,
			"== openat\n" + copy,
			"== link\nln: failed to create hard link '" + w.path("home/proj/creds/hard") + "' => '" + netrc + "': Invalid cross-device link\ncat: " + w.path("home/proj/creds/hard") + ": No such file or directory\n",
			"== rename\nmv: cannot move '" + netrc + "' to '" + w.path("home/proj/creds/moved") + "': Device or resource busy\nrm: cannot remove '" + netrc + "': Device or resource busy\n",
			"Read-only file system\n" + copy + "== umount\n",
			"== handle\nopen_by_handle_at: Operation not permitted\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the output lacks %q:\n%s", want, r)
			}
		}
		if !regexp.MustCompile(`== umount\numount: [^\n]*\n` + regexp.QuoteMeta(copy) + `== mountinfo`).MatchString(out) {
			t.Errorf("umount: want a refusal and the copy still there:\n%s", r)
		}
		if i, j := strings.Index(out, "== proc-root\n"), strings.Index(out, "== openat"); i < 0 || j < i || strings.Count(out[i:j], copy) < 1 || strings.ReplaceAll(out[i+len("== proc-root\n"):j], copy, "") != "" {
			t.Errorf("/proc/<pid>/root: want only the copy:\n%s", r)
		}
		if tm := regexp.MustCompile(`== token\n(\S*)\n`).FindStringSubmatch(out); tm == nil {
			t.Errorf("no token file:\n%s", r)
		} else {
			checkSentinel(t, "the token file's content", tm[1], tok)
		}
		for _, p := range []string{netrc, tokFile} {
			if b, _ := os.ReadFile(p); !strings.Contains(string(b), pw) && !strings.Contains(string(b), tok) {
				t.Errorf("the real %s was changed: %q", p, b)
			}
		}

		// SIGKILL of srt while the command runs.
		state := w.phlockStateDir("tmp")
		var stdout, stderr syncBuffer
		cmd := w.command([]string{"TMPDIR=" + state}, "-s", s, "-c", "cat "+netrc+"; echo started; sleep 60")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return strings.Contains(stdout.String(), "started") }, "the command to start", &stdout, &stderr)
		tree := descendants(cmd.Process.Pid)
		if len(tree) == 0 {
			t.Fatal("srt has no child processes")
		}
		if h, _ := filesHolding(t, state, pw, tok); len(h) > 0 {
			t.Errorf("while the command runs, files under TMPDIR hold the real value: %v", h)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		waitFor(t, func() bool {
			for _, p := range tree {
				if alive(p) {
					return false
				}
			}
			return true
		}, "srt's processes to end after its SIGKILL")
		if strings.Contains(stdout.String()+stderr.String(), pw) {
			t.Errorf("srt's output holds the real value:\n%s\n%s", stdout.String(), stderr.String())
		}
		holding, left := filesHolding(t, state, pw, tok)
		if len(holding) > 0 || len(left) > 0 {
			t.Errorf("after srt's SIGKILL, TMPDIR holds files %v, %v of them the real value", left, holding)
		}
		if b, _ := os.ReadFile(netrc); !strings.Contains(string(b), pw) {
			t.Errorf("the real file was changed: %q", b)
		}
	})
}
