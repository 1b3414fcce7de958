package landlock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// childEnv switches the test binary into a child role: "restrict" applies
// Rules with write paths and both scopes and runs the probes; "bare" applies
// Rules{} and runs a few probes showing that nothing is writable and that
// scopes are off unless asked. Both print JSON lines.
const (
	childEnv    = "SRT_LANDLOCK_TEST_CHILD"
	dirEnv      = "SRT_LANDLOCK_TEST_DIR"
	abstractEnv = "SRT_LANDLOCK_TEST_ABSTRACT"
)

func TestMain(m *testing.M) {
	switch role := os.Getenv(childEnv); role {
	case "":
	case mountRole:
		os.Exit(mountChild())
	default:
		os.Exit(child(role))
	}
	os.Exit(m.Run())
}

type header struct {
	ABI     int      `json:"abi"`
	Skipped []string `json:"skipped"`
	Error   string   `json:"error,omitempty"`
}

type result struct {
	Probe string `json:"probe"`
	Got   string `json:"got"`
}

func child(role string) int {
	base := os.Getenv(dirEnv)
	e := env{in: filepath.Join(base, "in"), out: filepath.Join(base, "out"), abstract: os.Getenv(abstractEnv)}
	parkThreads(4)
	var r Rules
	list := bareProbes
	switch role {
	case "scopes":
		list = scopeProbes
		r = Rules{WritePaths: []string{e.in}, ScopeAbstractUnix: true, ScopesOnly: true}
	case "restrict":
		list = probes
		r = Rules{
			WritePaths: []string{
				e.in,
				e.o("granted.txt"),
				"/dev/null", // os/exec opens it for writing for nil Stdout/Stderr
				filepath.Join(base, "missing"),
				filepath.Join(base, "missing", "deeper"),
				e.o("file") + "/not-a-dir", // ENOTDIR: skipped like a missing path
			},
			ScopeSignals:      true,
			ScopeAbstractUnix: true,
		}
	}
	enc := json.NewEncoder(os.Stdout)
	abi, skipped, err := Restrict(r)
	if err != nil {
		enc.Encode(header{Error: err.Error()})
		return 2
	}
	enc.Encode(header{ABI: abi, Skipped: skipped})
	for _, p := range list {
		enc.Encode(result{Probe: p.name, Got: p.run(e)})
	}
	return 0
}

var bareProbes = []probe{
	{"create file in the granted-nowhere dir", eacces, func(e env) string { return write(e.i("new"), os.O_CREATE) }},
	{"open /dev/null for writing (not granted)", eacces, func(env) string { return write("/dev/null", 0) }},
	{"os/exec with nil Stdout (opens /dev/null)", eacces, func(env) string { return errName(exec.Command("/bin/true").Run()) }},
	{"read file", ok, func(e env) string { _, err := os.ReadFile(e.i("file")); return errName(err) }},
	{"kill(parent, 0) without ScopeSignals", ok, func(env) string { return errName(unix.Kill(os.Getppid(), 0)) }},
	{"connect to abstract socket without ScopeAbstractUnix", ok, func(e env) string { return connectAbstract(e.abstract) }},
	{"mount tmpfs in a namespace of its own", []string{"EPERM"}, func(e env) string { return mountInOwnNamespace(e.in) }},
}

func TestRestrictInChild(t *testing.T) {
	requireLandlock(t)
	for _, c := range []struct {
		role  string
		list  []probe
		check func(t *testing.T, h header, base string)
	}{
		{"restrict", probes, func(t *testing.T, h header, base string) {
			want := []string{
				filepath.Join(base, "missing"),
				filepath.Join(base, "missing", "deeper"),
				filepath.Join(base, "out", "file") + "/not-a-dir",
			}
			if !slices.Equal(h.Skipped, want) {
				t.Errorf("skipped %q, want %q", h.Skipped, want)
			}
		}},
		{"bare", bareProbes, func(t *testing.T, h header, _ string) {
			if len(h.Skipped) != 0 {
				t.Errorf("skipped %q", h.Skipped)
			}
		}},
	} {
		t.Run(c.role, func(t *testing.T) {
			base := prepare(t)
			abstract := listenAbstract(t)
			h, got := runChild(t, c.role, base, abstract)
			t.Logf("ABI %d, skipped %q", h.ABI, h.Skipped)
			c.check(t, h, base)
			for _, p := range c.list {
				g, ok := got[p.name]
				t.Logf("%-50s %s", p.name, g)
				switch {
				case !ok:
					t.Errorf("%s: no answer", p.name)
				case h.ABI < minABI[p.name]:
					t.Logf("  (not enforceable with ABI %d; not checked)", h.ABI)
				case !slices.Contains(p.want, g):
					t.Errorf("%s: got %s, want %s", p.name, g, strings.Join(p.want, " or "))
				}
			}
			if b, err := os.ReadFile(filepath.Join(base, "out", "file")); err != nil || string(b) != "outside\n" {
				t.Errorf("outside file changed: %q, %v", b, err)
			}
		})
	}
}

// TestRestrictRefusesRelativePath checks a relative write path is an error
// and that the failed call left this process unrestricted.
func TestRestrictRefusesRelativePath(t *testing.T) {
	requireLandlock(t)
	if _, _, err := Restrict(Rules{WritePaths: []string{"relative/dir"}}); err == nil {
		t.Fatal("relative write path accepted")
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "still-writable"), nil, 0o644); err != nil {
		t.Fatalf("process restricted after a failed Restrict: %v", err)
	}
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if _, err := ABI(); errors.Is(err, ErrUnsupported) {
		t.Skipf("Landlock absent: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// prepare makes base/in (granted) and base/out (not granted) with content.
func prepare(t *testing.T) string {
	base := t.TempDir()
	for _, d := range []string{"in", "out", "out/sub"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"in/file": "inside\n", "out/file": "outside\n", "out/granted.txt": "granted\n"} {
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// listenAbstract binds a listening abstract Unix socket in this (unrestricted)
// process and returns its name, '@'-prefixed.
func listenAbstract(t *testing.T) string {
	name := fmt.Sprintf("@srt-landlock-test-%d-%s", os.Getpid(), t.Name())
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: name}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 8); err != nil {
		t.Fatal(err)
	}
	return name
}

func runChild(t *testing.T, role, base, abstract string) (header, map[string]string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+role, dirEnv+"="+base, abstractEnv+"="+abstract)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	var h header
	if sc.Scan() {
		json.Unmarshal(sc.Bytes(), &h)
	}
	if err != nil || h.Error != "" {
		t.Fatalf("child: %v %s\n%s", err, h.Error, stderr.String())
	}
	got := map[string]string{}
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("child output %q: %v", sc.Text(), err)
		}
		got[r.Probe] = r.Got
	}
	return h, got
}
