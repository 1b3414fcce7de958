package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/srt-sandbox/srt/internal/version"
)

// runProxy is `srt proxy …`: the standalone egress gate, which is the
// srt-proxy program (docs/srt-proxy.md). srt replaces itself with it, so
// the descriptors the caller hands over (--listen-fd, --decider-fd, …) and
// the signals it sends reach srt-proxy unchanged. As with the reference,
// srt's own --version wins over the subcommand's.
func runProxy(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--version" || a == "-V" {
			fmt.Fprintln(stdout, version.Version)
			return 0
		}
	}
	p, err := proxyProgram()
	if err != nil {
		fmt.Fprintf(stderr, "srt proxy: %v\n", err)
		return exitFailure
	}
	err = syscall.Exec(p, append([]string{"srt-proxy"}, args...), os.Environ())
	fmt.Fprintf(stderr, "srt proxy: cannot run %s: %v\n", p, err)
	return exitFailure
}

// proxyProgram finds srt-proxy beside this program's executable, else on
// PATH.
func proxyProgram() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), "srt-proxy")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath("srt-proxy")
	if err != nil {
		return "", fmt.Errorf("srt-proxy is not installed beside srt or on PATH; scripts/install installs it")
	}
	return p, nil
}
