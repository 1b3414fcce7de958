package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/seatbelt"
	"github.com/srt-sandbox/srt/settings"
)

// MacOSCommand is one command srt runs on macOS, under a Seatbelt
// profile made from the same resolved rules as Linux's plan (see
// internal/seatbelt).
type MacOSCommand struct {
	Config  *settings.Config
	Command string // run as Shell -c Command
	Shell   string // /bin/bash when ""
	// Text is what violations report as the command (Command when "").
	Text string
	// Dir, Home and Env: the working directory, home and environment the
	// command gets (the process's own when "" or nil).
	Dir, Home string
	Env       []string
	// SettingsFiles are never writable inside.
	SettingsFiles  []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Warnings       io.Writer // srt's warnings (Stderr when nil)
	Debug          io.Writer // the profile and argv, when not nil
	Violations     *ViolationStore
	OnViolation    func(Violation)
	// DeciderExecutable and ProxyExecutable as Options's: found beside
	// srt's executable or on PATH when "".
	DeciderExecutable, ProxyExecutable string
	LogStreamGrace                     time.Duration // how long denials may trail the exit (500 ms when 0)
	sandboxExec, logStream             []string      // tests: replacements
}

// RunMacOS runs the command under sandbox-exec and returns its exit
// status (128+N when it was killed by signal N), with srt's proxy on the
// host's loopback (startHostEgress) unless both proxy ports are the
// user's. While it runs, `log stream` reports the profile's denials and
// the decider the proxy's refusals, both recorded in Violations.
func RunMacOS(ctx context.Context, c MacOSCommand) (int, error) {
	if err := MacOSUnsupported(c.Config); err != nil {
		return 0, err
	}
	var err error
	if c.Dir == "" {
		if c.Dir, err = os.Getwd(); err != nil {
			return 0, fmt.Errorf("sandbox: the working directory: %w", err)
		}
	}
	if c.Home == "" {
		if c.Home, err = os.UserHomeDir(); err != nil {
			return 0, fmt.Errorf("sandbox: the home directory: %w; set HOME", err)
		}
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	warn := c.Warnings
	if warn == nil {
		warn = c.Stderr
	}
	// A TMPDIR of its own, removed after the run: no other sandbox sees
	// it.
	tmp, err := os.MkdirTemp("/private/tmp", "srt-")
	if err != nil {
		return 0, fmt.Errorf("sandbox: the command's TMPDIR: %w", err)
	}
	defer os.RemoveAll(tmp)
	env := seatbelt.Env{Command: c.Command, Shell: c.Shell, Cwd: filepath.Clean(c.Dir), Home: filepath.Clean(c.Home), Environ: c.Env,
		TmpDir: tmp, SettingsFiles: c.SettingsFiles, MaskedFiles: maskedFiles(c.Config, c.Home, c.Dir)}
	text := c.Text
	if text == "" {
		text = c.Command
	}
	var he *hostEgress
	if n := c.Config.Network; n.HTTPProxyPort == 0 || n.SOCKSProxyPort == 0 {
		he, err = startHostEgress(hostEgressOptions{Config: c.Config, Key: c.Command, Text: text,
			DeciderExecutable: c.DeciderExecutable, ProxyExecutable: c.ProxyExecutable,
			Warnings: warn, Debug: c.Debug != nil, Violations: c.Violations, OnViolation: c.OnViolation})
		if err != nil {
			return 0, err
		}
		defer he.Close()
	}
	macOSProxy(&env, &c.Config.Network, he)
	in, err := seatbelt.FromSettings(c.Config, env)
	if err != nil {
		return 0, err
	}
	p, err := seatbelt.Generate(in)
	if err != nil {
		return 0, err
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(warn, "srt: warning: %s\n", w)
	}
	if c.Debug != nil {
		fmt.Fprintf(c.Debug, "srt: profile:\n%s\nsrt: argv: %s\n", p.SBPL, Quote(append([]string{p.Argv[0], p.Argv[1], "<profile>"}, p.Argv[3:]...)))
	}
	nonce := strings.TrimSuffix(p.LogTag[strings.LastIndex(p.LogTag, "_END__")+len("_END__"):], "_SBX")
	stopLog := c.watchLog(nonce, srtlink.KeyLabel(c.Command), text, warn)

	argv := p.Argv
	if c.sandboxExec != nil {
		argv = append(append([]string(nil), c.sandboxExec...), argv[1:]...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = p.Env, c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		stopLog(0)
		return 0, fmt.Errorf("sandbox: starting sandbox-exec: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	grace := c.LogStreamGrace
	if grace == 0 {
		grace = 500 * time.Millisecond
	}
	stopLog(grace)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, fmt.Errorf("sandbox: sandbox-exec: %w", err)
}

// watchLog starts `log stream` for the profile's denials and records
// those of this command; the function it returns stops it, after grace
// (macOS delivers log messages with a delay). Without `log` (or when it
// fails) there are no violations, which is said once.
func (c MacOSCommand) watchLog(nonce, label, text string, warn io.Writer) func(grace time.Duration) {
	args := seatbelt.LogStreamArgs(nonce)
	if c.logStream != nil {
		args = c.logStream
	}
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(warn, "srt: warning: %s cannot be started (%v): the sandbox's denials are not recorded\n", args[0], err)
		return func(time.Duration) {}
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			d, ok := seatbelt.ParseLogLine(s.Text(), nonce)
			if !ok || d.Label != label || Ignored(c.Config.IgnoreViolations, d.Line, text) {
				continue
			}
			v := Violation{Line: d.Line, Command: text, Key: d.Label, Time: time.Now()}
			if c.Violations != nil {
				c.Violations.Add(v)
			}
			if c.OnViolation != nil {
				c.OnViolation(v)
			}
		}
	}()
	return func(grace time.Duration) {
		time.Sleep(grace)
		cmd.Process.Kill()
		cmd.Wait()
		<-read
	}
}

// maskedFiles are the files credentials.files masks: macOS cannot show a
// masked copy in their place, so they are hidden instead (the existing
// ones, their symlinks resolved).
func maskedFiles(cfg *settings.Config, home, dir string) []string {
	var out []string
	for _, f := range cfg.Credentials.Files {
		if f.Mode != "mask" {
			continue
		}
		p := f.Path
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			p = filepath.Join(home, rest)
		} else if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, real)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}
