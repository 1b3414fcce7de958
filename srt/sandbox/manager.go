//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/hostexec"
	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/settings"
)

// Options configure a Manager. The zero value is ready to use.
type Options struct {
	// Shell runs command strings: "bash" (looked up on PATH) by default.
	Shell string
	// InitExecutable is the program started inside the sandbox as its init
	// stage: srt-init, or any program that links this package. Default:
	// srt-init beside this program's executable, else this program.
	InitExecutable string
	// Logger receives debug lines (at slog.LevelDebug): the plan of each
	// command, the layers it gets, the programs found. Nil discards them.
	Logger *slog.Logger
	// Warnings receives the lines that say what a setting could not do
	// (default os.Stderr): each once in the Manager's life (a path the
	// settings name that does not exist, say), except those of a missing
	// protection layer (no Landlock), which come with every command. The
	// egress processes' own messages go there too.
	Warnings io.Writer
	// Debug makes the egress processes print a line per decision.
	Debug bool
	// DeciderExecutable and ProxyExecutable are the network's programs.
	// Default: beside this program's executable, else on PATH.
	DeciderExecutable, ProxyExecutable string
	// Ask, when set, is asked about destinations no rule decides (never
	// under strictAllowlist). Only allow == true allows; a reason with a
	// denial is shown to the command. It runs while the proxy waits.
	Ask func(AskRequest) (allow bool, reason string, err error)
	// OnViolation is called with each violation recorded.
	OnViolation func(Violation)
	// ReportFilesystemViolations records, as violations of the command
	// that attempted them, the writes the filesystem rules refuse and the
	// opens of paths they hide ("deny openat /etc/foo"; srt
	// --report-filesystem-violations). Diagnostic only: it changes no
	// decision, and costs each write (and, where the rules hide a path,
	// each open) a round trip to the sandbox's init stage. Commands can
	// override it (WithFilesystemViolations).
	ReportFilesystemViolations bool
	// SettingsFiles are files the host reads sandbox settings from (the
	// srt CLI passes the one it loaded). No sandbox may change them, nor
	// create them where they do not exist: a command that could would
	// choose the rules of every later run. ~/.srt-settings.json, the file
	// srt reads by default, is always protected.
	SettingsFiles []string
	// Backend, when set, overrides the settings' backend key, as srt
	// --backend does: "auto" (bubblewrap where it is installed and user
	// namespaces can be made, else Landlock), "bubblewrap" or "landlock"
	// (docs/security.md, "The Landlock backend"). New picks the backend
	// once, for the Manager's life.
	Backend string
	// AllowWeaker adds to the settings' allowWeaker, as srt
	// --allow-weaker does: the parts of the Landlock backend it may run
	// without (settings.WeakerNames).
	AllowWeaker []string
}

// backendConfig is cfg with opts' Backend and AllowWeaker applied (a copy
// when they change anything), or an ErrInvalidConfig naming the field.
func backendConfig(cfg *settings.Config, opts Options) (*settings.Config, error) {
	if opts.Backend == "" && len(opts.AllowWeaker) == 0 {
		return cfg, nil
	}
	c := *cfg
	if opts.Backend != "" {
		if !slices.Contains(settings.Backends, opts.Backend) {
			return nil, fmt.Errorf("sandbox: Options.Backend %q is not a backend: use \"auto\" (bubblewrap where it can run, else Landlock), \"bubblewrap\" or \"landlock\": %w", opts.Backend, ErrInvalidConfig)
		}
		c.Backend = opts.Backend
	}
	c.AllowWeaker = slices.Clone(cfg.AllowWeaker)
	for i, n := range opts.AllowWeaker {
		if err := settings.CheckWeaker(n); err != nil {
			return nil, fmt.Errorf("sandbox: Options.AllowWeaker[%d]: %v: %w", i, err, ErrInvalidConfig)
		}
		if !slices.Contains(c.AllowWeaker, n) {
			c.AllowWeaker = append(c.AllowWeaker, n)
		}
	}
	return &c, nil
}

// AskRequest is a destination no rule decides.
type AskRequest struct {
	Host    string
	Port    int
	Command string // the text of the command asking, if known
}

// Manager wraps commands in sandboxes for one configuration. It is safe for
// concurrent use.
type Manager struct {
	opts Options
	// bwrap is bubblewrap as found (configured or on PATH), and bwrapFix
	// what a refusal of it suggests; bwrapChecked is the resolved binary
	// whose version was checked (checkPrograms).
	bwrap        bwrap.Info
	bwrapFix     string
	bwrapMu      sync.Mutex
	bwrapChecked bwrap.Info
	shell        string
	regOnce      sync.Once
	reg          *placeholders.Registry
	regErr       error
	// initExe is the init stage's executable, initFix what a refusal of
	// it suggests.
	initExe, initFix string
	// kernel is what the running kernel gives (seccomp, Landlock).
	kernel kernelLayers
	// backend is settings.BackendBubblewrap or settings.BackendLandlock.
	backend string

	net        network
	netTools   netTools
	violations ViolationStore
	closed     atomic.Bool

	mu  sync.RWMutex
	cfg *settings.Config
	// updateMu makes UpdateConfig calls one at a time.
	updateMu sync.Mutex

	// warned are the plan's warnings already printed: each is printed
	// once in the Manager's life, not for every command.
	warnedMu sync.Mutex
	warned   map[string]bool
}

// warnOnce prints a warning of the plan on Options.Warnings, unless it
// has been printed already.
func (m *Manager) warnOnce(w string) {
	m.warnedMu.Lock()
	defer m.warnedMu.Unlock()
	if m.warned[w] {
		return
	}
	if m.warned == nil {
		m.warned = map[string]bool{}
	}
	m.warned[w] = true
	fmt.Fprintf(m.opts.Warnings, "srt: warning: %s\n", w)
}

// New checks that this machine can sandbox (bubblewrap present, and where
// only root or the caller can have put it; user namespaces available) and
// returns a Manager for cfg. What needs running bubblewrap (its version)
// and the check against the sandbox's own writable paths come with the
// first command: srt runs no program before it has checked that no
// sandbox under these settings could have planted it.
func New(cfg *settings.Config, opts Options) (*Manager, error) {
	if cfg == nil {
		return nil, fmt.Errorf("sandbox: nil config: %w", ErrInvalidConfig)
	}
	if opts.Warnings == nil {
		opts.Warnings = os.Stderr
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The first process a Go program starts pays for a probe of pidfd
	// support (a throwaway child); have it run now, beside the checks
	// below, rather than on the way of the first command's start.
	go func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Release()
		}
	}()
	kernel := probeKernel()
	// The backend: bubblewrap, found and checked, unless the settings
	// ask for Landlock, or ask for either and user namespaces cannot be
	// made here (backend_landlock.go).
	bcfg, err := backendConfig(cfg, opts)
	if err != nil {
		return nil, err
	}
	be, err := chooseBackend(bcfg, kernel)
	if err != nil {
		return nil, err
	}
	info, bwrapFix := be.bwrap, bwrapFix(cfg.BwrapPath)
	if err := checkArch(cfg); err != nil {
		return nil, err
	}
	if err := checkLayers(cfg, kernel, os.Getuid()); err != nil {
		return nil, err
	}
	shellName := opts.Shell
	if shellName == "" {
		shellName = "bash"
	}
	shell, err := exec.LookPath(shellName)
	if err != nil {
		return nil, hostexec.Missingf("Shell '%s' not found in PATH", shellName)
	}
	for _, ig := range cfg.Ignored {
		opts.Logger.Debug("setting " + ig + " has no effect on Linux, ignored")
	}
	initExe, initFix := opts.InitExecutable, fmt.Sprintf(fixConfigured, "InitExecutable")
	if initExe == "" {
		initExe, initFix = findInit(), fixBeside
	}
	opts.Logger.Debug("sandbox ready", "bwrap", info.Path, "init", initExe)
	m := &Manager{opts: opts, bwrap: info, bwrapFix: bwrapFix, shell: shell, cfg: cfg, initExe: initExe, initFix: initFix, kernel: kernel, backend: be.name}
	if be.announce != "" {
		fmt.Fprintf(opts.Warnings, "srt: warning: %s\n", be.announce)
	}
	made := cfg.Network
	m.net.made = &made
	m.net.ext = externalOf(&made)
	if m.net.ext.ownProxy() {
		m.net.token = newToken()
	}
	m.net.helper = hostPath(initExe)
	return m, nil
}

// hostPath is the path on the host of an executable given as a path or
// /proc/self/exe.
func hostPath(exe string) string {
	if exe == "/proc/self/exe" {
		if p, err := os.Executable(); err == nil {
			exe = p
		}
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		return p
	}
	return exe
}

// Violations is the manager's violation store.
func (m *Manager) Violations() *ViolationStore { return &m.violations }

// Close stops the network processes. Commands still running lose their
// network; call it after their Release. Command then returns ErrClosed.
func (m *Manager) Close() error {
	m.closed.Store(true)
	m.net.once.Do(func() { m.net.err = ErrClosed })
	var err error
	if m.net.eg != nil {
		err = m.net.eg.Close()
	}
	// After the proxy: the bundle is gone only once nothing serves it.
	if f := m.net.trust.Load(); f != nil {
		placeholders.RemoveRunDir(f.dir)
	}
	return err
}

// findInit prefers srt-init installed beside this program (it starts faster
// than a re-execution of a larger program) and falls back to this program.
func findInit() string {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), "srt-init")
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
				return p
			}
		}
	}
	return "/proc/self/exe"
}

// sweepIfNeeded cleans up after killed runs when there are journals to
// collect.
func (m *Manager) sweepIfNeeded() {
	if placeholders.HaveJournals() {
		m.registry()
	}
}

// registry opens the placeholder registry the first time a command needs
// one: most commands need none, and do not pay for it.
func (m *Manager) registry() (*placeholders.Registry, error) {
	m.regOnce.Do(func() {
		m.reg, m.regErr = placeholders.Open()
		if m.regErr != nil {
			m.regErr = fmt.Errorf("sandbox: %w", m.regErr)
		}
	})
	return m.reg, m.regErr
}

// Config returns the configuration new commands get.
func (m *Manager) Config() *settings.Config {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.cfg
}

// UpdateConfig replaces the configuration: commands wrapped from now on get
// all of it; running commands get the new network lists for their next
// connection. It returns once the network's decider has the new lists
// (when the network has started), so that every connection made after it
// returns is decided by them; an error then means the decider did not
// confirm them. What the network proxy reads when it starts
// (network.tlsTerminate, parentProxy and the request options
// refuseOpaqueTunnels, requireHostMatch, ambiguousRequestTarget,
// stripResponseHeaders, allowPlaintextHeaderSet) keeps the values it
// started with, and so do network.httpProxyPort and socksProxyPort, read
// by New (settings.Keys, StartOnly); an update that changes them says so
// on Options.Warnings.
func (m *Manager) UpdateConfig(cfg *settings.Config) error {
	if cfg == nil {
		return errors.New("sandbox: nil config")
	}
	// One update at a time, to the end: the lists in force are those of
	// the last update to return.
	m.updateMu.Lock()
	defer m.updateMu.Unlock()
	m.mu.Lock()
	m.cfg = cfg
	m.mu.Unlock()
	m.warnStartOnly(cfg)
	m.warnExternalPorts(cfg)
	if eg := m.net.current(); eg != nil {
		if err := eg.Update(networkOf(cfg), m.opts.Ask != nil); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// Diagnose explains why bubblewrap failed to build a sandbox.
func (m *Manager) Diagnose() error {
	m.bwrapMu.Lock()
	info := m.bwrapChecked
	m.bwrapMu.Unlock()
	if info.Path == "" {
		return nil // no command ran: bubblewrap has not failed
	}
	return bwrap.Diagnose(info)
}

// settingsFiles are the settings files every sandbox must leave alone:
// Options.SettingsFiles and the default file in home, made absolute.
func (m *Manager) settingsFiles(home string) []string {
	out := []string{settings.DefaultPath(home)}
	for _, f := range m.opts.SettingsFiles {
		if abs, err := filepath.Abs(f); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// debugf writes a debug line formatted as by fmt.Sprintf, and formats
// (the plan, the layers: not free) only when debug lines are wanted.
func (m *Manager) debugf(format string, a ...any) {
	if m.opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		m.opts.Logger.Debug(fmt.Sprintf(format, a...))
	}
}
