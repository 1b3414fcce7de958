//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// chainProbe runs in the sandbox, in the working directory of a git
// checkout (a chain directory: writable, with .git/hooks, .git/config and
// the mandatory names beneath), and prints one line per attempt: the name
// and "ok" or the errno's name.
const chainProbe = `
import errno, os, sys, fcntl
def t(name, f):
    try:
        r = f()
        print(name, "ok" if r is None else r)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def write(p, data="x", flags=os.O_WRONLY|os.O_CREAT|os.O_TRUNC, dir_fd=None):
    fd = os.open(p, flags, 0o666, dir_fd=dir_fd)
    os.write(fd, data.encode()); os.close(fd)
def read(p):
    with open(p) as f: return f.read().strip() or "empty"
outside = sys.argv[1]

# What the chain directory allows now (bubblewrap allows all of it).
t("create-top", lambda: write("top", "top"))
t("read-top", lambda: read("top"))
t("append-top", lambda: write("top", "more", os.O_WRONLY|os.O_APPEND))
t("rename-top", lambda: os.rename("top", "top2"))
t("unlink-top", lambda: os.unlink("top2"))
t("mkdir-top", lambda: os.mkdir("newdir"))
t("create-in-newdir", lambda: write("newdir/f", "deep"))
t("mkdir-deep", lambda: os.makedirs("newdir/a/b/c"))
t("create-deep", lambda: write("newdir/a/b/c/g", "g"))
t("read-deep", lambda: read("newdir/a/b/c/g"))
t("rename-dir", lambda: os.rename("newdir", "movedir"))
t("create-after-move", lambda: write("movedir/a/h"))
t("save-by-rename", lambda: (write(".existing.txt.swp", "saved"), os.rename(".existing.txt.swp", "existing.txt"))[-1])
t("read-saved", lambda: read("existing.txt"))
t("unlink-existing", lambda: os.unlink("keep.txt"))
t("symlink-top", lambda: os.symlink("existing.txt", "sl"))
t("link-top", lambda: os.link("existing.txt", "hl"))
t("excl-exists", lambda: write("existing.txt", flags=os.O_WRONLY|os.O_CREAT|os.O_EXCL))
t("cloexec", lambda: fcntl.fcntl(os.open("ce", os.O_WRONLY|os.O_CREAT|os.O_CLOEXEC), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
t("no-cloexec", lambda: fcntl.fcntl(libc.open(b"nce", os.O_WRONLY|os.O_CREAT, 0o644), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
os.umask(0o077)
t("umask", lambda: (write("um"), oct(os.stat("um").st_mode & 0o777))[-1])
os.umask(0o022)
t("truncate-new", lambda: os.truncate("top3" if write("top3", "abcdef") is None else "", 2))
t("mkdir-in-git", lambda: os.mkdir(".git/hooks2"))
t("write-through-link-to-new", lambda: (write("newtarget", "a"), os.symlink("newtarget", "lnew"), write("lnew", "b", os.O_WRONLY|os.O_APPEND), read("newtarget"))[-1])
t("create-through-dangling-link", lambda: (os.symlink("movedir/dangled", "ldang"), write("ldang", "c"), read("movedir/dangled"))[-1])
t("nofollow-link", lambda: write("lnew", "x", os.O_WRONLY|os.O_NOFOLLOW))
t("move-in-from-tmpdir", lambda: (write(os.environ["TMPDIR"] + "/t", "t"), os.rename(os.environ["TMPDIR"] + "/t", "fromtmp"))[-1])
t("unlink-missing", lambda: os.unlink("nothing-here"))

# What the rules refuse, every way round.
t("create-hooks", lambda: write(".git/hooks/pre-commit", "evil"))
t("mkdir-hooks", lambda: os.mkdir(".git/hooks/x"))
t("write-config", lambda: write(".git/config", "evil", os.O_WRONLY|os.O_APPEND))
t("rename-git-away", lambda: os.rename(".git", "gitaway"))
t("rename-hooks-away", lambda: os.rename(".git/hooks", ".git/hooks-old"))
t("rmdir-hooks", lambda: os.rmdir(".git/hooks"))
t("unlink-config", lambda: os.unlink(".git/config"))
t("write-bashrc", lambda: write(".bashrc", "evil"))
t("unlink-bashrc", lambda: os.unlink(".bashrc"))
t("rename-over-bashrc", lambda: (write("rb", "evil"), os.rename("rb", ".bashrc"))[-1])
t("rename-over-config", lambda: os.rename("rb", ".git/config"))
t("rename-over-hooks", lambda: (os.mkdir("rd"), os.rename("rd", ".git/hooks"))[-1])
t("exchange-bashrc", lambda: os.system("python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); r=l.renameat2(-100,b\"rb\",-100,b\".bashrc\",2); sys.exit(0 if r==0 else ctypes.get_errno())'") >> 8 or None)
t("mkdir-vscode", lambda: os.mkdir(".vscode/tasks"))
t("create-vscode", lambda: write(".vscode/settings.json", "evil"))
t("create-claude", lambda: write(".claude/settings.json", "evil"))
t("rmdir-claude", lambda: os.rmdir(".claude"))
t("rename-claude", lambda: os.rename(".claude", "claude2"))
t("symlink-to-hooks", lambda: os.symlink(".git/hooks", "hk"))
t("create-through-symlink", lambda: write("hk/post-checkout", "evil"))
t("symlink-to-config", lambda: os.symlink(".git/config", "cfg"))
t("write-through-symlink", lambda: write("cfg", "evil", os.O_WRONLY|os.O_APPEND))
t("hardlink-config", lambda: os.link(".git/config", "cfglink"))
t("hardlink-outside", lambda: os.link(outside, "outlink"))
t("write-hardlink", lambda: write("outlink", "evil", os.O_WRONLY|os.O_APPEND))
gitfd = os.open(".git", os.O_RDONLY|os.O_DIRECTORY)
t("dirfd-create-hooks", lambda: write("hooks/post-merge", "evil", dir_fd=gitfd))
t("dirfd-write-config", lambda: write("config", "evil", os.O_WRONLY|os.O_TRUNC, dir_fd=gitfd))
t("dirfd-rename-hooks", lambda: os.rename("hooks", "hooks-gone", src_dir_fd=gitfd, dst_dir_fd=gitfd))
t("dirfd-mkdir-ok", lambda: os.mkdir("viafd", dir_fd=gitfd))
hooksfd = os.open(".git/hooks", os.O_PATH|os.O_DIRECTORY)
t("opath-dirfd-hooks", lambda: write("pre-applypatch", "evil", dir_fd=hooksfd))
t("dev-fd-hooks", lambda: write("/dev/fd/%d/applypatch-msg" % hooksfd, "evil"))
t("dev-fd-cwd-ok", lambda: (write("/dev/fd/%d/viadevfd" % os.open(".", os.O_PATH|os.O_DIRECTORY), "ok"), read("viadevfd"))[-1])
t("proc-self-cwd", lambda: write("/proc/self/cwd/.git/hooks/pre-push", "evil"))
t("proc-self-cwd-ok", lambda: (write("/proc/self/cwd/viaproc", "ok"), read("viaproc"))[-1])
t("absolute-link-to-hooks", lambda: (os.symlink(os.getcwd() + "/.git/hooks/pre-rebase", "labs"), write("labs", "evil"))[-1])
t("link-chain-to-config", lambda: (os.symlink("cfg", "cfg2"), write("cfg2", "evil", os.O_WRONLY|os.O_APPEND))[-1])
t("proc-link-to-hooks", lambda: (os.symlink("/proc/self/cwd/.git/hooks/post-rewrite", "lproc"), write("lproc", "evil"))[-1])
t("truncate-config", lambda: os.truncate(".git/config", 0))
t("create-outside", lambda: write(os.path.dirname(outside) + "/made-outside", "evil"))
`

// TestLandlockChainDirs: under the Landlock backend a git checkout's
// working directory (writable, with write-protected paths beneath) lets
// the command make, rename and remove its entries — the init stage's
// supervisor does it — and every protected path stays refused, through
// symlinks, hard links, renames and directory descriptors, with EACCES
// (bubblewrap's read-only mounts say EROFS or EBUSY; docs/security.md).
func TestLandlockChainDirs(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.write("home/proj/existing.txt", "old")
		w.write("home/proj/keep.txt", "keep")
		outside := w.write("home/outside.txt", "outside")
		probe := w.write("home/probe.py", chainProbe)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, "python3 "+probe+" "+outside)
		want := map[string]string{
			"create-top": "ok", "read-top": "top", "append-top": "ok", "rename-top": "ok", "unlink-top": "ok",
			"mkdir-top": "ok", "create-in-newdir": "ok", "mkdir-deep": "ok", "create-deep": "ok", "read-deep": "g",
			"rename-dir": "ok", "create-after-move": "ok", "save-by-rename": "ok", "read-saved": "saved",
			"unlink-existing": "ok", "symlink-top": "ok", "link-top": "ok", "excl-exists": "EEXIST",
			"cloexec": "1", "no-cloexec": "0", "umask": "0o600", "truncate-new": "ok", "mkdir-in-git": "ok",
			"move-in-from-tmpdir": "ok", "unlink-missing": "ENOENT",
			"write-through-link-to-new": "ab", "create-through-dangling-link": "c", "nofollow-link": "ELOOP",
			"absolute-link-to-hooks": "EROFS", "link-chain-to-config": "EROFS", "proc-link-to-hooks": "EROFS",

			"create-hooks": "EROFS", "mkdir-hooks": "EROFS", "write-config": "EROFS", "rename-git-away": "EROFS",
			"rename-hooks-away": "EROFS", "rmdir-hooks": "EROFS", "unlink-config": "EROFS", "write-bashrc": "EROFS",
			"unlink-bashrc": "EROFS", "rename-over-bashrc": "EROFS", "rename-over-config": "EROFS",
			"rename-over-hooks": "EROFS", "exchange-bashrc": "30", "mkdir-vscode": "EROFS", "create-vscode": "EROFS",
			"create-claude": "EROFS", "rmdir-claude": "EROFS", "rename-claude": "EROFS",
			"symlink-to-hooks": "ok", "create-through-symlink": "EROFS", "symlink-to-config": "ok",
			"write-through-symlink": "EROFS", "hardlink-config": "EACCES", "hardlink-outside": "EACCES",
			"write-hardlink": "ENOENT", "dirfd-create-hooks": "EROFS", "dirfd-write-config": "EROFS",
			"dirfd-rename-hooks": "EROFS", "dirfd-mkdir-ok": "ok", "opath-dirfd-hooks": "EROFS", "dev-fd-hooks": "EROFS", "dev-fd-cwd-ok": "ok", "proc-self-cwd": "EROFS", "proc-self-cwd-ok": "ok",
			"truncate-config": "EROFS", "create-outside": "EROFS",
		}
		wantSteps(t, r.stdout, want)
		if t.Failed() {
			t.Logf("%s", r)
		}
		// On the host: what was made is there, owned by the runner;
		// nothing protected changed.
		for _, p := range []string{"movedir/a/b/c/g", "movedir/a/h", "existing.txt", "sl", "hl", "fromtmp", ".git/hooks2", ".git/viafd"} {
			fi, err := os.Lstat(filepath.Join(w.dir, p))
			if err != nil {
				t.Errorf("%s was not made: %v", p, err)
				continue
			}
			if uid := fileUID(fi); uid != w.r.uid {
				t.Errorf("%s is owned by uid %d, not the runner's %d", p, uid, w.r.uid)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(w.dir, "existing.txt")); string(b) != "saved" {
			t.Errorf("existing.txt holds %q", b)
		}
		for _, p := range []string{".git/hooks/pre-commit", ".git/hooks/x", ".git/hooks/post-checkout", ".git/hooks/post-merge", ".git/hooks/pre-push", ".git/hooks/pre-rebase", ".git/hooks/post-rewrite", ".git/hooks/pre-applypatch", ".git/hooks/applypatch-msg", "gitaway", "claude2", ".vscode/tasks", ".vscode/settings.json", ".claude/settings.json", "cfglink", "outlink", "keep.txt"} {
			if exists(filepath.Join(w.dir, p)) {
				t.Errorf("ESCAPE or wrong result: %s exists", p)
			}
		}
		if exists(w.path("home/made-outside")) {
			t.Error("ESCAPE: a file was made outside the write roots")
		}
		if b, _ := os.ReadFile(outside); string(b) != "outside" {
			t.Errorf("ESCAPE: the file outside holds %q", b)
		}
		if b, err := os.ReadFile(filepath.Join(w.dir, ".git/config")); err != nil || strings.Contains(string(b), "evil") || len(b) == 0 {
			t.Errorf("ESCAPE: .git/config holds %q (%v)", b, err)
		}
		if b, _ := os.ReadFile(filepath.Join(w.dir, ".bashrc")); len(b) != 0 {
			t.Errorf("ESCAPE: .bashrc holds %q", b)
		}
	})
}

// TestLandlockChainGit: git itself works at the top of its checkout (the
// index is written as index.lock and renamed; new files are added and
// committed; a branch is made), and its hooks stay out of reach.
func TestLandlockChainGit(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		args := append(landlockArgs(w), "-s", w.settings(s), "-c",
			`echo one > a.txt && git add a.txt && git commit -qm one && git checkout -qb side && echo two > b.txt && git add b.txt && git commit -qm two && git log --oneline | wc -l | sed 's/^/COMMITS /'; printf '#!/bin/sh\ntouch hooked\n' > .git/hooks/pre-commit 2>/dev/null || echo HOOK-refused`)
		r := w.srtEnv(gitVars, args...)
		expect(t, r, 0, "COMMITS 2", "HOOK-refused")
		if out, err := w.gitOnHost(w.dir, "log", "--format=%s", "side"); err != nil || out != "two\none\n" {
			t.Errorf("git log on the host: %q %v", out, err)
		}
		if exists(filepath.Join(w.dir, ".git/hooks/pre-commit")) {
			t.Error("ESCAPE: a hook was written")
		}
	})
}

// TestLandlockChainRace: while the command creates files through "sw",
// another of its processes swaps "sw" between a directory of its own and
// a symlink to .git/hooks (bounded). Every file lands in the directory;
// none in the hooks.
func TestLandlockChainRace(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		race := w.write("home/race.py", `
import os, time
os.mkdir("real")
os.symlink(".git/hooks", "lnk")
pid = os.fork()
if pid == 0:
    end = time.time() + 3
    i = 0
    while time.time() < end and i < 200000:
        try:
            os.rename("real", "sw"); os.rename("sw", "real")
            os.rename("lnk", "sw"); os.rename("sw", "lnk")
        except OSError:
            pass
        i += 1
    os._exit(0)
made = refused = 0
for i in range(3000):
    try:
        fd = os.open("sw/f%d" % i, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
        os.close(fd); made += 1
    except OSError:
        refused += 1
os.waitpid(pid, 0)
print("MADE", made > 0, "REFUSED", refused > 0)
`)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, "python3 "+race)
		expect(t, r, 0, "MADE True")
		hooks, _ := os.ReadDir(filepath.Join(w.dir, ".git/hooks"))
		for _, h := range hooks {
			if n := strings.TrimPrefix(h.Name(), "f"); n != h.Name() && strings.Trim(n, "0123456789") == "" {
				t.Fatalf("ESCAPE: %s was made in .git/hooks", h.Name())
			}
		}
	})
}

func fileUID(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// TestLandlockChainCredentials: the supervisor makes entries with the
// command's credentials. As root (the command holds no capability), a
// chain directory owned by another user, mode 0755, refuses a new entry
// with EACCES, as it refuses the command's own call: the supervisor's
// capabilities are dropped while it works.
func TestLandlockChainCredentials(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		if w.r.uid != 0 {
			return // an unprivileged supervisor has nothing to drop
		}
		w.gitOnHostOK(w.dir, "init", "-q")
		git := filepath.Join(w.dir, ".git")
		if err := os.Chown(git, 1001, 1001); err != nil {
			t.Fatal(err)
		}
		os.Chmod(git, 0o755)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":[]}`)
		r := w.landlock(s, `mkdir .git/x 2>&1 | sed 's/^/MKDIR: /'; touch .git/y 2>&1 | sed 's/^/TOUCH: /'; touch top && echo TOP-ok`)
		expect(t, r, 0, "MKDIR: mkdir: cannot create directory '.git/x': Permission denied", "TOUCH: touch: cannot touch '.git/y': Permission denied", "TOP-ok")
		if exists(filepath.Join(git, "x")) || exists(filepath.Join(git, "y")) {
			t.Fatal("ESCAPE: the supervisor used root's capabilities")
		}
	})
}

// chainReadProbe runs where the working directory is a chain directory of
// the reads too (a denyRead path beneath it): what the command makes there
// is opened for reading by the supervisor; the hidden path stays hidden.
const chainReadProbe = `
import errno, os, subprocess
def t(name, f):
    try:
        r = f()
        print(name, "ok" if r is None else r)
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def write(p, data="x", flags=os.O_WRONLY|os.O_CREAT|os.O_TRUNC):
    fd = os.open(p, flags, 0o644)
    os.write(fd, data.encode()); os.close(fd)
def read(p):
    with open(p) as f: return f.read().strip() or "empty"
def rdwr(p):
    fd = os.open(p, os.O_RDWR); os.close(fd)
t("read-existing", lambda: read("a.txt"))
t("create-read", lambda: (write("new.txt", "fresh"), read("new.txt"))[-1])
t("rdwr-new", lambda: rdwr("new.txt"))
t("mkdir-list", lambda: (os.mkdir("nd"), write("nd/f", "deep"), read("nd/f"), ",".join(os.listdir("nd/")))[-1])
t("sub-create-read", lambda: (write("sub/n", "s"), read("sub/n"))[-1])
t("link-to-new", lambda: (os.symlink("new.txt", "nl"), read("nl"))[-1])
t("exec-new", lambda: (write("run.sh", "#!/bin/sh\necho ran\n"), os.chmod("run.sh", 0o755), subprocess.run(["./run.sh"], capture_output=True).stdout.decode().strip())[-1])
t("read-env", lambda: read(".env"))
t("read-sub-env", lambda: read("sub/.env"))
t("read-env-link", lambda: (os.symlink(".env", "el"), read("el"))[-1])
t("read-env-proc", lambda: read("/proc/self/cwd/.env"))
t("hardlink-env", lambda: os.link(".env", "eh"))
t("rename-env", lambda: os.rename(".env", "env2"))
t("rdwr-mcp", lambda: rdwr(".mcp.json"))
t("rdwr-mcp-link", lambda: (os.symlink(".mcp.json", "ml"), rdwr("ml"))[-1])
t("read-mcp", lambda: read(".mcp.json"))
`

// TestLandlockChainReads: with a denyRead path beneath the working
// directory the Landlock backend restricts reads there, and the
// supervisor opens what the command made (files, directories, through a
// symlink) for reading; the hidden files stay unreadable every way round,
// and a write-protected file is not opened for writing through a read.
func TestLandlockChainReads(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		w.gitOnHostOK(w.dir, "init", "-q")
		w.write("home/proj/a.txt", "old")
		w.write("home/proj/.env", "SECRET=1")
		w.write("home/proj/sub/.env", "SECRET=2")
		probe := w.write("home/probe.py", chainReadProbe)
		s := fsSettings(`{"allowWrite":["."],"denyWrite":[],"denyRead":["` + w.path("home/proj/.env") + `","` + w.path("home/proj/sub/.env") + `"]}`)
		r := w.landlock(s, "python3 "+probe)
		want := map[string]string{
			"read-existing": "old", "create-read": "fresh", "rdwr-new": "ok", "mkdir-list": "f",
			"sub-create-read": "s", "link-to-new": "fresh",
			"exec-new": "EACCES", // execve checks Landlock on the path: nothing the supervisor can open for it
			"read-env": "EACCES", "read-sub-env": "EACCES", "read-env-link": "EACCES", "read-env-proc": "EACCES",
			"hardlink-env": "EACCES", "rename-env": "EROFS", "rdwr-mcp": "EROFS", "rdwr-mcp-link": "EROFS",
			"read-mcp": `{"mcpServers":{}}`,
		}
		wantSteps(t, r.stdout, want)
		if strings.Contains(r.stdout, "SECRET") {
			t.Errorf("ESCAPE: a hidden file was read:\n%s", r.stdout)
		}
		if t.Failed() {
			t.Logf("%s", r)
		}
		if b, _ := os.ReadFile(filepath.Join(w.dir, ".mcp.json")); string(b) != "{\"mcpServers\":{}}\n" && len(b) != 0 {
			t.Errorf("ESCAPE: .mcp.json holds %q", b)
		}
		if exists(filepath.Join(w.dir, "eh")) || !exists(filepath.Join(w.dir, ".env")) {
			t.Error("ESCAPE: the hidden file was linked or moved")
		}
	})
}

// stepLines reads a probe script's output, one "step result" per line,
// into a map by step.
func stepLines(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			got[k] = v
		}
	}
	return got
}

// wantSteps holds each step of want to its result in out.
func wantSteps(t *testing.T, out string, want map[string]string) {
	t.Helper()
	got := stepLines(out)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
}
