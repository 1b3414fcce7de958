//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fsviol measures --report-filesystem-violations on a make-like workload:
// make runs targets recipes, each a cat of one source and headers headers
// into an object file (reads and writes beneath the working directory,
// which the settings let the sandbox write), plus what each cat's start
// opens (the dynamic loader's). The same srt runs it without the flag, with
// it (writes notified), and with it and a denyRead (every open notified),
// interleaved, rounds times; medians and ratios.
func fsviol(srt string, rounds, targets, headers int) error {
	dir, err := os.MkdirTemp("", "srt-bench-fsviol-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{home, filepath.Join(home, ".ssh"), filepath.Join(proj, "src"), filepath.Join(proj, "inc"), filepath.Join(proj, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var mk strings.Builder
	var hs []string
	for h := 0; h < headers; h++ {
		name := fmt.Sprintf("inc/h%d.h", h)
		hs = append(hs, name)
		if err := os.WriteFile(filepath.Join(proj, name), []byte("#define H 1\n"), 0o644); err != nil {
			return err
		}
	}
	mk.WriteString("all:")
	for i := 0; i < targets; i++ {
		fmt.Fprintf(&mk, " out/t%d.o", i)
		if err := os.WriteFile(filepath.Join(proj, fmt.Sprintf("src/t%d.c", i)), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			return err
		}
	}
	mk.WriteString("\nout/%.o: src/%.c\n\tcat $< " + strings.Join(hs, " ") + " > $@\n")
	if err := os.WriteFile(filepath.Join(proj, "Makefile"), []byte(mk.String()), 0o644); err != nil {
		return err
	}
	write := func(name, deny string) (string, error) {
		p := filepath.Join(dir, name)
		s := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[` + deny + `],"allowWrite":["` + proj + `"],"denyWrite":[]}}`
		return p, os.WriteFile(p, []byte(s), 0o644)
	}
	plain, err := write("plain.json", "")
	if err != nil {
		return err
	}
	hiding, err := write("hiding.json", `"`+filepath.Join(home, ".ssh")+`"`)
	if err != nil {
		return err
	}
	run := []string{"-c", "rm -f out/*.o && make -s -j1"}
	kinds := []struct {
		name string
		args []string
	}{
		{"off", append([]string{srt, "-s", plain}, run...)},
		{"on, writes notified", append([]string{srt, "-s", plain, "--report-filesystem-violations"}, run...)},
		{"off, with a denyRead", append([]string{srt, "-s", hiding}, run...)},
		{"on, every open notified", append([]string{srt, "-s", hiding, "--report-filesystem-violations"}, run...)},
	}
	env := append(os.Environ(), "HOME="+home)
	times := make([][]time.Duration, len(kinds))
	for r := -1; r < rounds; r++ {
		for k, kind := range kinds {
			d, err := timeRunIn(proj, kind.args, env)
			if err != nil {
				return fmt.Errorf("%s: %w", kind.name, err)
			}
			if r >= 0 { // round -1 warms up
				times[k] = append(times[k], d)
			}
		}
	}
	opens := targets * (headers + 1 + 1)
	fmt.Printf("fsviol: make, %d targets, each cat of %d files into one (%d opens by cat, plus the loader's), rounds=%d\n", targets, headers+1, opens, rounds)
	for k, kind := range kinds {
		fmt.Printf("  %-26s median %8.1f ms  (min %.1f, max %.1f)\n", kind.name, ms2(median(times[k])), ms2(minD(times[k])), ms2(maxD(times[k])))
	}
	ratio := func(on, off int) string {
		return fmt.Sprintf("median %.3f, min %.3f", float64(median(times[on]))/float64(median(times[off])), float64(minD(times[on]))/float64(minD(times[off])))
	}
	fmt.Printf("  ratio on/off, writes        %s   (target <= 1.10)\n", ratio(1, 0))
	fmt.Printf("  ratio on/off, every open    %s   (target <= 1.10)\n", ratio(3, 2))
	return nil
}

// timeRunIn runs argv in dir and returns its wall time.
func timeRunIn(dir string, argv, env []string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %w", argv, err)
	}
	return time.Since(start), nil
}
