//go:build linux

package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// srt runs no program (bubblewrap, srt-init, srt-proxy, decider) from a
// place a sandbox under the same settings may write, nor one another user
// could have put there or changed (issue 10, item 11). Before, srt took the
// first bwrap on PATH: a command that could write a directory leading PATH
// (node_modules/.bin under `npm run`) planted one, and the next srt ran it,
// as root under a root srt.

// fakeBwrap is a bubblewrap that leaves a mark, then runs the real one.
func fakeBwrap(marker string) string {
	return "#!/bin/sh\necho ran >> " + marker + "\nexec /usr/bin/bwrap \"$@\"\n"
}

const systemPATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

func TestEscapePlantedBwrap(t *testing.T) {
	skipOnLandlock(t)
	forEach(t, func(t *testing.T, w *workspace) {
		binDir := w.mkdir("home/proj/node_modules/.bin")
		marker := w.path("home/bwrap-ran") // where the sandbox cannot write
		env := []string{"PATH=" + binDir + ":" + systemPATH}
		s := w.settings(fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`))
		planted := filepath.Join(binDir, "bwrap")
		// Run 1 plants bubblewrap where PATH leads (it runs under the
		// system's, as node_modules/.bin has none yet).
		want(t, newProbeRun(w.srtEnv(env, "-s", s, "--", probeBin(t), "plant-file", planted, fakeBwrap(marker))), "create", "ok")
		if !exists(planted) {
			t.Fatal("control: the planted bwrap is not on the host")
		}
		// Run 2 finds it first on PATH and refuses it.
		r := w.srtEnv(env, "-s", s, "-c", "echo ran inside")
		expect(t, r, 1)
		msg := "srt: bwrap at " + planted + ": the sandbox may write " + w.dir + " (filesystem.allowWrite.0), so a sandboxed command could have put " + w.dir + "/node_modules there; srt will not run it: set bwrapPath to a trusted copy, such as /usr/bin/bwrap, or take that directory off PATH\n"
		if r.stderr != msg || r.stdout != "" {
			t.Fatalf("want exactly\n%s\ngot %s", msg, r)
		}
		if exists(marker) {
			t.Fatal("ESCAPE: srt ran the planted bwrap")
		}
		// The fix the message suggests works: bwrapPath.
		fixed := w.write("fixed.json", fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"bwrapPath":"/usr/bin/bwrap"`))
		expect(t, w.srtEnv(env, "-s", fixed, "-c", "echo ran inside"), 0, "ran inside")

		// Control: the same program where no sandbox under these settings
		// may write, owned by the user: srt finds it on PATH and runs it.
		tools := w.mkdir("tools")
		w.write("tools/bwrap", fakeBwrap(marker))
		os.Chmod(filepath.Join(tools, "bwrap"), 0o755)
		expect(t, w.srtEnv([]string{"PATH=" + tools + ":" + systemPATH}, "-s", s, "-c", "echo ran inside"), 0, "ran inside")
		if !exists(marker) {
			t.Fatal("control: srt did not run the bwrap PATH leads to")
		}
		os.Remove(marker)

		// Another user's program, and a directory others may write, are
		// refused before anything runs.
		if os.Geteuid() == 0 {
			other := w.mkdir("other")
			w.write("other/bwrap", fakeBwrap(marker))
			os.Chmod(filepath.Join(other, "bwrap"), 0o755)
			os.Lchown(filepath.Join(other, "bwrap"), 65534, 65534)
			r = w.srtEnv([]string{"PATH=" + other + ":" + systemPATH}, "-s", s, "true")
			expect(t, r, 1, "srt: bwrap at "+other+"/bwrap: "+other+"/bwrap is owned by uid 65534, neither root nor uid "+itoa(w.r.uid)+" (the user srt runs as); srt will not run it: set bwrapPath to a trusted copy, such as /usr/bin/bwrap, or take that directory off PATH\n")
		}
		shared := w.mkdir("shared")
		w.write("shared/bwrap", fakeBwrap(marker))
		os.Chmod(filepath.Join(shared, "bwrap"), 0o755)
		os.Chmod(shared, 0o777)
		r = w.srtEnv([]string{"PATH=" + shared + ":" + systemPATH}, "-s", s, "true")
		expect(t, r, 1, "srt: bwrap at "+shared+"/bwrap: the directory "+shared+" is writable by other users (mode 0777); run chmod go-w on it; srt will not run it:")
		if exists(marker) {
			t.Fatal("srt ran a bwrap it should have refused")
		}
	})
}

// installAt copies srt and the given companions into dir, owned by the
// runner, as an install in a directory of the user's would be.
func (w *workspace) installAt(rel string, programs ...string) string {
	w.t.Helper()
	dir := w.mkdir(rel)
	for _, p := range append([]string{"srt"}, programs...) {
		src, err := os.Open(filepath.Join(bin, p))
		if err != nil {
			w.t.Fatal(err)
		}
		dst, err := os.OpenFile(filepath.Join(dir, p), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		if err != nil {
			w.t.Fatal(err)
		}
		_, err = io.Copy(dst, src)
		src.Close()
		dst.Close()
		if err != nil {
			w.t.Fatal(err)
		}
		w.chown(filepath.Join(dir, p))
	}
	return dir
}

// srtAt runs the srt installed in dir.
func (w *workspace) srtAt(dir string, args ...string) result {
	w.t.Helper()
	cmd := exec.Command(filepath.Join(dir, "srt"), args...)
	cmd.Dir, cmd.Env = w.dir, w.env()
	w.asRunner(cmd)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			w.t.Fatal(err)
		}
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// srt-init, srt-proxy and decider installed beside srt in a directory the
// sandbox may write are refused; installed where it may not, they run.
func TestEscapeCompanionPrograms(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		writable := w.write("writable.json", fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`))
		readOnly := w.write("read-only.json", fsSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`))
		fix := "srt will not run it: install srt and its programs in a directory only root or you can write, outside filesystem.allowWrite (or add it to filesystem.denyWrite)\n"

		dir := w.installAt("home/proj/.tools", "srt-init")
		r := w.srtAt(dir, "-s", writable, "true")
		expect(t, r, 1)
		if want := "srt: srt-init at " + dir + "/srt-init: the sandbox may write " + w.dir + " (filesystem.allowWrite.0), so a sandboxed command could have put " + dir + " there; " + fix; r.stderr != want {
			t.Fatalf("want exactly\n%s\ngot %s", want, r)
		}
		// Controls: the same install runs where the sandbox may not write
		// it, and the fix the message gives works.
		expect(t, w.srtAt(dir, "-s", readOnly, "-c", "echo ok"), 0, "ok")
		denied := w.write("denied.json", fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["./.tools"]}`))
		expect(t, w.srtAt(dir, "-s", denied, "-c", "echo ok"), 0, "ok")

		// The network's programs, even for a command that uses no network.
		dir = w.installAt("home/proj/.net", "decider", "srt-proxy")
		r = w.srtAt(dir, "-s", writable, "true")
		expect(t, r, 1, "srt: decider at "+dir+"/decider: the sandbox may write "+w.dir+" (filesystem.allowWrite.0), so a sandboxed command could have put "+dir+" there; "+fix)
		os.Remove(filepath.Join(dir, "decider"))
		r = w.srtAt(dir, "-s", writable, "true")
		expect(t, r, 1, "srt: srt-proxy at "+dir+"/srt-proxy: the sandbox may write "+w.dir+" (filesystem.allowWrite.0), so a sandboxed command could have put "+dir+" there; "+fix)
	})
}

// In a user namespace (srt nested in a sandbox, or under `unshare -r`),
// root's files show as the overflow uid (65534): no process there can act
// as it, so it counts as root and the system's bubblewrap still runs.
func TestProgramsInUserNamespace(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		tmp := w.mkdir("tmp")
		cmd := exec.Command("unshare", "--user", "--map-root-user", filepath.Join(bin, "srt"), "-c", "stat -c %u /usr/bin/bwrap; echo ran")
		cmd.Dir, cmd.Env = w.dir, w.env("TMPDIR="+tmp)
		w.asRunner(cmd)
		out, err := cmd.CombinedOutput()
		want := "0\nran\n" // root's own namespace maps root
		if w.r.uid != 0 {
			want = "65534\nran\n"
		}
		if err != nil || string(out) != want {
			t.Fatalf("want %q, got %q (%v)", want, out, err)
		}
	})
}

// `srt proxy` runs srt-proxy only from where no other user could have put
// it.
func TestProxyCommandProgram(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		dir := w.installAt("shared", "srt-proxy")
		r := w.srtAt(dir, "proxy", "--help")
		expect(t, r, 0) // control: the same install, not shared, runs
		os.Chmod(dir, 0o777)
		r = w.srtAt(dir, "proxy", "--help")
		expect(t, r, 1)
		if want := "srt proxy: srt-proxy at " + dir + "/srt-proxy: the directory " + dir + " is writable by other users (mode 0777); run chmod go-w on it; srt will not run it: install srt and srt-proxy in a directory only root or you can write\n"; r.stderr != want {
			t.Fatalf("want exactly\n%s\ngot %s", want, r)
		}
	})
}
