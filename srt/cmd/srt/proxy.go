//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/srt-sandbox/srt/internal/hostexec"
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
	p, fix, err := proxyProgram()
	if err == nil {
		// Only a program no other user could have put there or changed.
		var prog *hostexec.Program
		if prog, err = hostexec.Resolve("srt-proxy", p, fix, os.Getuid()); err == nil {
			p = prog.Real
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "srt proxy: %v\n", err)
		return exitFailure
	}
	err = syscall.Exec(p, append([]string{"srt-proxy"}, args...), os.Environ())
	fmt.Fprintf(stderr, "srt proxy: cannot run %s: %v\n", p, err)
	return exitFailure
}

// proxyProgram finds srt-proxy beside this program's executable, else on
// PATH; with the fix a refusal of it suggests.
func proxyProgram() (path, fix string, err error) {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), "srt-proxy")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				return p, "install srt and srt-proxy in a directory only root or you can write", nil
			}
		}
	}
	p, err := exec.LookPath("srt-proxy")
	if err != nil {
		return "", "", fmt.Errorf("srt-proxy is not installed beside srt or on PATH; scripts/install installs it")
	}
	p, err = filepath.Abs(p)
	return p, "install srt-proxy beside srt, or take that directory off PATH", err
}
