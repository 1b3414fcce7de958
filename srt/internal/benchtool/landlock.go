//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// landlock measures `srt -c true` on the Landlock backend against bare
// `true` and against `srt -c true` on the bubblewrap backend, interleaved
// (docs/benchmarks.md). The announcement line goes to stderr each run.
func landlock(srt string, runs int) error {
	_, _, env, done, err := startupCommands(srt)
	if err != nil {
		return err
	}
	defer done()
	ll := []string{srt, "--backend", "landlock", "-c", "true"}
	if os.Geteuid() == 0 {
		// As root the backend runs only with the opt-in it names (it
		// cannot stop root's chmod of the host's files).
		ll = []string{srt, "--backend", "landlock", "--allow-weaker=root", "-c", "true"}
	}
	cmds := [][]string{
		{"true"},
		ll,
		{srt, "--backend", "bubblewrap", "-c", "true"},
	}
	for i := 0; i < 3; i++ {
		for _, c := range cmds {
			if _, _, err := timeRunQuiet(c, env); err != nil {
				return err
			}
		}
	}
	times := make([][]time.Duration, len(cmds))
	for i := 0; i < runs; i++ {
		for j, c := range cmds {
			d, _, err := timeRunQuiet(c, env)
			if err != nil {
				return err
			}
			times[j] = append(times[j], d)
		}
	}
	names := []string{"bare true", "srt landlock -c true", "srt bubblewrap -c true"}
	fmt.Printf("landlock: runs=%d\n", runs)
	for j, n := range names {
		fmt.Printf("  %-24s median %8.2f ms  (min %.2f, max %.2f)\n", n, ms2(median(times[j])), ms2(minD(times[j])), ms2(maxD(times[j])))
	}
	fmt.Printf("  ratio landlock/bubblewrap %.2f   (target < 1: the Landlock backend starts faster)\n", float64(median(times[1]))/float64(median(times[2])))
	return nil
}

// timeRunQuiet is timeRun with stderr kept, and shown only on failure.
func timeRunQuiet(argv []string, env []string) (time.Duration, string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("%v: %w\n%s", argv, err, stderr.String())
	}
	return time.Since(start), stderr.String(), nil
}
