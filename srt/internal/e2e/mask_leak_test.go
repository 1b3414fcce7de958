//go:build linux

package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newFilesHolding walks the files under roots changed since start (at
// most 20000 entries each), but skip, and returns those that hold any of
// values.
func newFilesHolding(roots []string, skip string, start time.Time, values ...string) []string {
	var out []string
	for _, root := range roots {
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > 20000 {
				if d != nil && d.IsDir() && n > 20000 {
					return filepath.SkipAll
				}
				return nil
			}
			info, err := d.Info()
			if err != nil || p == skip || !info.Mode().IsRegular() || info.ModTime().Before(start) || info.Size() > 16<<20 {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for _, v := range values {
				if strings.Contains(string(b), v) {
					out = append(out, p)
					break
				}
			}
			return nil
		})
	}
	return out
}

// TestMaskNoSecretAnywhere: a masked variable and a masked file, used
// against an inject host (so the real values are live in srt-proxy),
// with -d and --violations-fd. While the command runs, no process under
// srt — srt-proxy, the decider, bubblewrap, srt-init, the command — has a
// real value in its argv or environment; srt's stdout and stderr (every
// -d line), the violation lines, and every file written under TMPDIR,
// /tmp, /var/tmp and /dev/shm during the run hold none, during and
// after it.
//
// The one exception: srt's own environment holds the variable's value,
// because the user gave it to srt (docs/credentials.md). The test reads
// it there, which shows that it reads environments it could find the
// value in.
func TestMaskNoSecretAnywhere(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		up := startMaskUpstream(t, nil)
		token, pw := secret("tok_", 40), secret("pw_", 30)
		file := w.write("home/proj/netrc", "machine inject.test login me password "+pw+"\n")
		s := up.maskSettings(w, `{"envVars":[{"name":"TOKEN","mode":"mask"}],"files":[{"path":"`+file+`","mode":"mask","extract":"password (\\S+)"}]}`)
		tmp := w.phlockStateDir("tmp")
		gate := w.path("home/proj/go")
		script := strings.Join([]string{
			`curl -sS -H "Authorization: Bearer $TOKEN" --data-binary "$TOKEN" ` + up.https("inject.test") + `/env`,
			`pw=$(awk '{print $6}' ` + file + `); curl -sS -H "X-Pw: $pw" ` + up.https("inject.test") + `/file`,
			`curl -sS -H "Authorization: Bearer $TOKEN" ` + up.https("other.test") + `/other`,
			`curl -sS -H "Authorization: Bearer $TOKEN" ` + up.http("inject.test") + `/plain`,
			`curl -s -o /dev/null -w "denied=%{http_code}\n" -H "Authorization: Bearer $TOKEN" http://denied.test/`,
			`echo ready`,
			`i=0; while [ ! -e ` + gate + ` ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo done`,
		}, "\n")
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		start := time.Now().Add(-time.Second)
		cmd := w.hostsCommand(maskHosts, filepath.Join(bin, "srt"), []string{"TOKEN=" + token, "TMPDIR=" + tmp}, "-d", "--violations-fd", "3", "-s", s, "-c", script)
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.ExtraFiles = []*os.File{wr}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wr.Close()
		violations := make(chan string, 1)
		go func() { s, _ := readAll(rd); violations <- s }()
		waitFor(t, func() bool { return strings.Contains(stdout.String(), "ready") }, "the command's requests")
		srtPID := cmd.Process.Pid
		if env, _ := os.ReadFile("/proc/" + itoa(srtPID) + "/environ"); !strings.Contains(string(env), "TOKEN="+token+"\x00") {
			t.Errorf("srt's own environment lacks the value the user gave it: the environments read here are not the ones that could hold it")
		}
		seen := map[string]bool{}
		for _, p := range descendants(srtPID) {
			comm, err := os.ReadFile("/proc/" + itoa(p) + "/comm")
			if err != nil {
				continue // ended meanwhile
			}
			name := strings.TrimSpace(string(comm))
			seen[name] = true
			for _, what := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile("/proc/" + itoa(p) + "/" + what)
				if err != nil {
					t.Errorf("reading /proc/%d/%s (%s): %v", p, what, name, err)
					continue
				}
				if strings.Contains(string(b), token) || strings.Contains(string(b), pw) {
					t.Errorf("/proc/%d/%s (%s) holds a real value: %q", p, what, name, b)
				}
			}
		}
		t.Logf("srt's processes: %v", seen)
		for _, want := range []string{"srt-proxy", "decider", "bwrap", "srt-init", "bash"} {
			if !seen[want] {
				t.Errorf("no %s among srt's processes (seen %v): the process tree was not read", want, seen)
			}
		}
		// The real file itself, which the test wrote, aside.
		roots := []string{tmp, "/tmp", "/var/tmp", "/dev/shm"}
		if h := newFilesHolding(roots, file, start, token, pw); len(h) > 0 {
			t.Errorf("while the command runs, files hold a real value: %v", h)
		}
		w.write("home/proj/go", "")
		waitExit(t, cmd, &stderr)
		v := <-violations
		out := stdout.String() + stderr.String() + v
		if strings.Contains(out, token) || strings.Contains(out, pw) {
			t.Errorf("srt's output or violation lines hold a real value:\n%s\n%s\n%s", stdout.String(), stderr.String(), v)
		}
		if !strings.Contains(stdout.String(), "denied=403") || !strings.Contains(stdout.String(), "done") || !strings.Contains(v, "denied.test") ||
			!strings.Contains(stderr.String(), " inject=injected\n") {
			t.Errorf("the run did not go as planned (a denied request reported, an injected one in -d):\n%s\n%s\n%s", stdout.String(), stderr.String(), v)
		}
		if got := up.request(t, "/env"); got.header.Get("Authorization") != "Bearer "+token {
			t.Errorf("/env: the upstream received %q; want the real value (so that srt-proxy held it)", got.header.Get("Authorization"))
		}
		if got := up.request(t, "/file"); got.header.Get("X-Pw") != pw {
			t.Errorf("/file: the upstream received %q; want the real password", got.header.Get("X-Pw"))
		}
		if h := newFilesHolding(roots, file, start, token, pw); len(h) > 0 {
			t.Errorf("after the run, files hold a real value: %v", h)
		}
	})
}
