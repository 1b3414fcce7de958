package seccomp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// childEnv switches the test binary into one of its child roles: "filter"
// installs the native program and runs the probes, "socket" reports what
// socket(AF_UNIX) returns (used after execve from a filtered child), "tiocsti"
// adopts the pty on its stdin as controlling terminal and injects into it.
const childEnv = "SRT_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "filter":
		os.Exit(filterChild(os.Stdout))
	case "socket":
		fmt.Println(sock(unix.AF_UNIX))
		os.Exit(0)
	case "tiocsti":
		fmt.Println(injectAsControllingTerminal())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type probeResult struct {
	Probe  string `json:"probe"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
	// for a control probe that did not succeed before the filter: why, and
	// whether the environment explains it (see explainControl)
	Why        string `json:"why,omitempty"`
	EnvLimited bool   `json:"envLimited,omitempty"`
}

func filterChild(w io.Writer) int {
	parkThreads(4)
	before := map[string]string{}
	for _, p := range probes {
		if p.before {
			before[p.name] = p.run()
		}
	}
	a, _ := Native()
	prog, err := Build(a, Options{BlockUnixSockets: true, BlockNamespaces: true, BlockTerminalInjection: true,
		BlockKeyrings: true, BlockSetID: true})
	if err == nil {
		err = Install(prog)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	enc := json.NewEncoder(w)
	for _, p := range probes {
		r := probeResult{Probe: p.name, Before: before[p.name], After: p.run()}
		if ctty, ok := controls[p.name]; ok && r.Before != "OK" {
			r.Why, r.EnvLimited = explainControl(r.Before, ctty)
		}
		enc.Encode(r)
	}
	return 0
}

// TestInstalledFilter runs the probes in a child that installed the native
// program, as the current user and, when root, also as an unprivileged uid:
// every answer must be the expected one, and the same for both.
func TestInstalledFilter(t *testing.T) {
	if _, ok := Native(); !ok {
		t.Skipf("no seccomp program for %s", runtime.GOARCH)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); errors.Is(err, unix.EINVAL) {
		t.Skip("kernel built without seccomp (PR_GET_SECCOMP: EINVAL)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	asSelf := runFilterChild(t, self, nil)
	checkResults(t, fmt.Sprintf("uid %d", os.Getuid()), asSelf)

	t.Run("unprivileged", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("already unprivileged; switching uid needs root")
		}
		dir, err := os.MkdirTemp("", "srt-seccomp-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "seccomp.test")
		if err := copyFile(self, bin); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cred := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
		asNobody := runFilterChild(t, bin, cred)
		checkResults(t, "uid 65534", asNobody)
		for name, r := range asSelf {
			if asNobody[name].After != r.After {
				t.Errorf("%s: root got %s, uid 65534 got %s", name, r.After, asNobody[name].After)
			}
		}
	})
}

func runFilterChild(t *testing.T, bin string, cred *syscall.Credential) map[string]probeResult {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), childEnv+"=filter")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("filter child: %v\n%s", err, stderr.String())
	}
	results := map[string]probeResult{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var r probeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("child output %q: %v", sc.Text(), err)
		}
		results[r.Probe] = r
	}
	return results
}

func checkResults(t *testing.T, who string, results map[string]probeResult) {
	t.Helper()
	for _, p := range probes {
		r, ok := results[p.name]
		if !ok {
			t.Errorf("%s: %s: no result", who, p.name)
			continue
		}
		before := r.Before
		if !p.before {
			before = "(not run)"
		}
		t.Logf("%s: %-55s before=%-14s after=%s", who, p.name, before, r.After)
		if r.After != p.want {
			t.Errorf("%s: %s: got %s, want %s", who, p.name, r.After, p.want)
		}
	}
	for _, p := range probes {
		if r := results[p.name]; beforeOK[p.name] && r.Before != "OK" {
			t.Errorf("%s: %s: without the filter this gives %s, want OK: the answer under the filter shows nothing", who, p.name, r.Before)
		}
	}
	// An EPERM under the filter shows the filter at work only where the same
	// call succeeds without it; say why when it could not.
	for _, p := range probes {
		if _, ok := controls[p.name]; !ok {
			continue
		}
		r := results[p.name]
		t.Run("control "+p.name, func(t *testing.T) {
			switch {
			case !p.before:
				t.Fatalf("%s: control probe %s is not run before the filter", who, p.name)
			case r.Before == "OK":
			case r.EnvLimited:
				t.Skipf("%s: without the filter this gives %s, so it cannot serve as a control here: %s", who, r.Before, r.Why)
			default:
				t.Errorf("%s: without the filter this gives %s, want OK: %s", who, r.Before, r.Why)
			}
		})
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
