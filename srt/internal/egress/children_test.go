//go:build linux

package egress

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-sandbox/decider/control"
)

// TestMain runs the helper of TestChildrenEndWithSrt when asked.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SRT_EGRESS_TEST_HELPER"); dir != "" {
		os.Exit(childrenHelper(dir))
	}
	os.Exit(m.Run())
}

// childrenHelper is "srt": it starts the egress without the kernel's
// parent-death signal (as on macOS), says the children's pids, and waits
// to be killed.
func childrenHelper(dir string) int {
	pdeathsig = false
	e, err := Start(Config{DeciderPath: filepath.Join(dir, "decider"), ProxyPath: filepath.Join(dir, "srt-proxy"),
		Network: control.Network{AllowedDomains: []string{"example.com"}, DeniedDomains: []string{}}, Token: "0123456789abcdef"})
	if err != nil {
		fmt.Println("failed", err)
		return 1
	}
	if e.decider.SysProcAttr.Pdeathsig != 0 || e.proxy.SysProcAttr.Pdeathsig != 0 {
		fmt.Println("failed: the children have a parent-death signal")
		return 1
	}
	fmt.Println("ready", e.decider.Process.Pid, e.proxy.Process.Pid)
	select {}
}

// buildCompanions builds decider and srt-proxy into a directory of the
// test's.
func buildCompanions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", dir+"/", "github.com/srt-sandbox/decider/cmd/decider", "github.com/srt-sandbox/srt-proxy/cmd/srt-proxy")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building decider and srt-proxy: %v\n%s", err, out)
	}
	return dir
}

// running says whether pid is a process that has not exited (a zombie
// has).
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestChildrenEndWithSrt: srt killed with SIGKILL leaves no decider and
// no srt-proxy behind, without the parent-death signal (macOS has none):
// each sees its channel from srt end and exits.
func TestChildrenEndWithSrt(t *testing.T) {
	dir := buildCompanions(t)
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "SRT_EGRESS_TEST_HELPER="+dir)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	var pids []int
	for _, s := range f[1:] {
		pid, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
		// The test's own cleanup, should a child outlive the check.
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	// Alive while srt is: what follows is the kill's doing.
	time.Sleep(200 * time.Millisecond)
	for _, pid := range pids {
		if !running(pid) {
			t.Fatalf("process %d ended before srt was killed", pid)
		}
	}
	helper.Process.Kill()
	helper.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (decider, srt-proxy) still runs 5 s after srt was killed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
