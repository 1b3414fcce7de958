//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/srt-sandbox/srt/sandbox"
)

// ownCgroup is the cgroup v2 directory this process is in.
func ownCgroup(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(l, "0::"); ok {
			return filepath.Join("/sys/fs/cgroup", rel)
		}
	}
	t.Fatalf("no cgroup v2 line in /proc/self/cgroup:\n%s", b)
	return ""
}

// TestLimitsCgroupManyCommands is an agent host's Manager running many
// commands under limits, one after another and side by side, in a cgroup
// v2 delegated to it (scripts/test-uml runs this test there, in a cgroup
// of its own; SRT_TEST_REQUIRE_CGROUP says so): the first moves the host
// and its helpers into a cgroup beside the leaves, once; each command gets
// a leaf of its own with memory.max and pids.max, removed when it ends;
// one command's memory hog is killed without touching the other.
func TestLimitsCgroupManyCommands(t *testing.T) {
	if os.Getenv("SRT_TEST_REQUIRE_CGROUP") == "" {
		t.Skip("needs a cgroup v2 with memory and pids delegated to this test alone: scripts/test-uml runs it")
	}
	start := ownCgroup(t)
	m := newManager(t, parse(t, `{`+noNetwork+`,"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"limits":{"memoryMiB":64,"processes":40}}`), sandbox.Options{})
	defer m.Close()
	self := filepath.Join(start, "srt-"+strconv.Itoa(os.Getpid())+"-self")
	leafRe := regexp.MustCompile(`^0::(/.*/srt-` + strconv.Itoa(os.Getpid()) + `-[0-9a-f]{12})$`)
	// show prints the command's cgroup and its two bounds.
	const show = `c=$(sed -n 's/^0:://p' /proc/self/cgroup); echo "0::$c"; cat /sys/fs/cgroup$c/memory.max /sys/fs/cgroup$c/pids.max`
	check := func(out string, code int) string {
		t.Helper()
		f := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(f) != 3 || !leafRe.MatchString(f[0]) || f[1] != strconv.Itoa(64<<20) || f[2] != "56" {
			t.Fatalf("want a leaf of its own with memory.max 64 MiB and pids.max 56, got exit %d:\n%s", code, out)
		}
		leaf := filepath.Join("/sys/fs/cgroup", leafRe.FindStringSubmatch(f[0])[1])
		if filepath.Dir(leaf) != start {
			t.Fatalf("leaf %s is not beside the host's cgroup %s", leaf, start)
		}
		return leaf
	}
	seen := map[string]bool{}
	for i := range 3 {
		leaf := check(run(t, m, show))
		if seen[leaf] {
			t.Fatalf("command %d reused leaf %s", i, leaf)
		}
		seen[leaf] = true
		if _, err := os.Stat(leaf); !os.IsNotExist(err) {
			t.Fatalf("command %d's leaf %s is still there after it ended: %v", i, leaf, err)
		}
		// Moved once, beside the leaves; never deeper.
		if got := ownCgroup(t); got != self {
			t.Fatalf("after command %d the host is in %s, want %s", i, got, self)
		}
	}
	// Side by side: a hog killed in its leaf, a neighbour unharmed.
	var wg sync.WaitGroup
	var hogOut, calmOut string
	var hogCode, calmCode int
	wg.Add(2)
	go func() {
		defer wg.Done()
		hogOut, hogCode = run(t, m, `python3 -c 'b = b"x" * (512 << 20); print("allocated")'`)
	}()
	go func() {
		defer wg.Done()
		calmOut, calmCode = run(t, m, `sleep 2; `+show)
	}()
	wg.Wait()
	if hogCode != 137 || strings.Contains(hogOut, "allocated") {
		t.Fatalf("the hog was not killed at 64 MiB: exit %d\n%s", hogCode, hogOut)
	}
	check(calmOut, calmCode)
	ents, _ := os.ReadDir(start)
	for _, e := range ents {
		if e.IsDir() && e.Name() != filepath.Base(self) {
			t.Errorf("left in %s after every command ended: %s", start, e.Name())
		}
	}
}
