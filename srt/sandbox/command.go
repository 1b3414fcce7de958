//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/internal/limits"
	"github.com/srt-sandbox/srt/internal/netns"
	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/internal/unixgate"
	"github.com/srt-sandbox/srt/settings"
)

// CommandOption adjusts one command.
type CommandOption func(*commandOptions)

type commandOptions struct {
	dir, id, text string
	env           []string
	nullFD        int
	fs            *settings.Filesystem
	nested        *bool
	pass          []passFile
	fsViolations  *bool
}

// passFile is a descriptor given to the command (WithPassFile).
type passFile struct {
	n int
	f *os.File
}

// The descriptors WithPassFile may give, as the reference's --pass-fd.
const (
	MinPassFD = 3
	MaxPassFD = 8
)

// WithPassFile gives the command f as its descriptor n (MinPassFD to
// MaxPassFD), as srt --pass-fd does; every other descriptor above 2 is
// closed. The file is checked as the command's standard descriptors are
// (ErrStdioFile; no directory, no socket that leads out): the command
// holds it with the access it was opened with, past the filesystem rules.
// f stays the caller's: close it after Start.
func WithPassFile(n int, f *os.File) CommandOption {
	return func(o *commandOptions) { o.pass = append(o.pass, passFile{n, f}) }
}

// checkPass refuses descriptors WithPassFile cannot give.
func (o *commandOptions) checkPass() error {
	seen := map[int]bool{}
	for _, p := range o.pass {
		switch {
		case p.n < MinPassFD || p.n > MaxPassFD:
			return fmt.Errorf("sandbox: WithPassFile: descriptor %d is out of range; a command may be given descriptors %d to %d", p.n, MinPassFD, MaxPassFD)
		case p.f == nil:
			return fmt.Errorf("sandbox: WithPassFile: descriptor %d has no file", p.n)
		case seen[p.n]:
			return fmt.Errorf("sandbox: WithPassFile: descriptor %d is given twice", p.n)
		case p.n == o.nullFD:
			return fmt.Errorf("sandbox: WithPassFile: descriptor %d is also the null descriptor (WithNullDescriptor, srt's --control-fd slot); give each its own number", p.n)
		}
		seen[p.n] = true
	}
	return nil
}

// WithCommandText is the text violations of this command report, and that
// ignoreViolations keys match (default: the command string).
func WithCommandText(text string) CommandOption { return func(o *commandOptions) { o.text = text } }

// WithFilesystem replaces the settings' filesystem rules for this command
// (validated as the settings file's are: use settings.Parse or build the
// entries by hand). Its Disabled wins outright.
func WithFilesystem(fs settings.Filesystem) CommandOption {
	return func(o *commandOptions) { o.fs = &fs }
}

// WithFilesystemViolations overrides Options.ReportFilesystemViolations
// for this command.
func WithFilesystemViolations(report bool) CommandOption {
	return func(o *commandOptions) { o.fsViolations = &report }
}

// WithNestedUserNamespaces overrides allowNestedUserNamespaces for this
// command.
func WithNestedUserNamespaces(allow bool) CommandOption {
	return func(o *commandOptions) { o.nested = &allow }
}

// reportFS says whether the command's filesystem violations are reported.
func (o *commandOptions) reportFS(m Options) bool {
	if o.fsViolations != nil {
		return *o.fsViolations
	}
	return m.ReportFilesystemViolations
}

// config is cfg with the command's overrides applied (cfg itself when
// there are none).
func (o *commandOptions) config(cfg *settings.Config) *settings.Config {
	if o.fs == nil && o.nested == nil {
		return cfg
	}
	over := *cfg
	if o.fs != nil {
		over.Filesystem = *o.fs
	}
	if o.nested != nil {
		over.AllowNestedUserNamespaces = *o.nested
	}
	return &over
}

// WithNullDescriptor gives the command /dev/null, open read-only, on
// descriptor n (srt's --control-fd slot), so that it does not find another
// file there.
func WithNullDescriptor(n int) CommandOption { return func(o *commandOptions) { o.nullFD = n } }

// WithCommandID names the command for attribution: its violations carry
// this id (default: the command text).
func WithCommandID(id string) CommandOption { return func(o *commandOptions) { o.id = id } }

// WithDir runs the command in dir (default: the current directory).
// Relative paths in the settings are resolved against it.
func WithDir(dir string) CommandOption { return func(o *commandOptions) { o.dir = dir } }

// WithEnv gives the command this environment instead of the process's.
func WithEnv(env []string) CommandOption { return func(o *commandOptions) { o.env = env } }

// argsFD is the descriptor bubblewrap reads its arguments from.
const argsFD = initstage.ExeFD + 1

// Cmd is a sandboxed command. Configure its embedded *exec.Cmd (Stdin,
// Stdout, Stderr, …; unset ones are /dev/null, as with exec.Cmd) before
// starting it, start and wait for it with Cmd's own Start, Run, Wait,
// Output and CombinedOutput, and call Release afterwards.
type Cmd struct {
	*exec.Cmd
	plan *plan.Plan // what the sandbox is made of (Options.Logger shows it)

	channel   *net.UnixConn // srt's end of the socket pair shared with the init stage
	childEnds []*os.File
	claim     *placeholders.Claim
	once      sync.Once   // Release's
	released  atomic.Bool // Release has begun: Signal refuses

	done       chan struct{} // closed once the status is known, or the sandbox is gone
	readerDone chan struct{}
	// servedDone is closed once serveListeners has returned: the sandbox's
	// sockets are handed over and taken back, or never will be. Release
	// waits for it before it closes them.
	servedDone chan struct{}
	started    bool
	exitCode   int
	exited     bool
	// ns is the sandbox's network namespace (its listening sockets).
	ns *netns.Namespace
	// user is the sandbox's attribution user for captured connections,
	// loopback the names of its loopback destinations (loopbackEntries).
	user      string
	loopAddrs []netip.AddrPort
	loopback  map[string]string
	m         *Manager
	expose    exposure   // network.exposeLoopbackPorts
	pass      []passFile // WithPassFile's, checked at Start
	id        string     // the sandbox's id for the proxy
	life      runState
	// maskKey is the command's key when srt gave the decider its masks.
	maskKey *string
	// limits are the command's limits (limits.go).
	limits *limitRun
	// ll is the Landlock backend's part of the command (nil under
	// bubblewrap): backend_landlock.go.
	ll *landlockRun
}

// Command wraps a shell command string. The command runs with the
// configuration current at this call.
func (m *Manager) Command(ctx context.Context, command string, opts ...CommandOption) (c *Cmd, err error) {
	if m.closed.Load() {
		return nil, ErrClosed
	}
	o := commandOptions{env: os.Environ()}
	for _, f := range opts {
		f(&o)
	}
	if err := o.checkPass(); err != nil {
		return nil, err
	}
	if o.dir == "" {
		if o.dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("sandbox: working directory: %w", err)
		}
	}
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return nil, err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w; set HOME", err)
	}
	base := m.Config()
	cfg := o.config(base)
	if cfg != base {
		if err := checkArch(cfg); err != nil {
			return nil, err
		}
	}
	if err := checkLayers(cfg, m.kernel, os.Getuid()); err != nil {
		return nil, err
	}
	applied, cgroup, err := m.sandboxLimits(cfg.Limits)
	if err != nil {
		return nil, err
	}
	if m.backend == settings.BackendLandlock {
		return m.landlockCommand(ctx, command, &o, cfg, filepath.Clean(home), applied, cgroup)
	}

	c = &Cmd{}
	made := c // c is nil once an error is returned
	defer func() {
		if err != nil {
			made.Release()
		}
	}()
	key := o.id
	if key == "" {
		key = command
	}
	// The network namespace is made while srt sweeps and plans: its
	// helper's start is the slow part, so it comes first.
	m.net.mu.Lock()
	own := m.net.lists[o.id]
	m.net.mu.Unlock()
	c.loopAddrs, c.loopback = loopbackEntries(cfg.Network.AllowedDomains, own)
	if err := exposeConflicts(cfg.Network.ExposeLoopbackPorts, c.loopAddrs); err != nil {
		return nil, err
	}
	ns, network, err := m.startNetwork(c.loopAddrs)
	if err != nil {
		return nil, err
	}
	c.ns, c.user = ns, srtlink.UserFor(key)
	// Runs that were killed may have left placeholders: clean them up
	// before the plan looks at the filesystem, or it would take them for
	// real files.
	m.sweepIfNeeded()
	text := o.text
	if text == "" {
		text = command
	}
	m.net.remember(srtlink.KeyLabel(key), text)
	// The masked credentials: the command's environment and files show
	// sentinels, and the decider has the real values before it starts.
	masks, err := m.commandMasks(cfg, o.env, filepath.Clean(home), filepath.Clean(o.dir), newToken()[:16])
	if err != nil {
		return nil, err
	}
	o.env, cfg = masks.env, masks.config(cfg)
	// The state directory is made before the plan, which keeps it
	// read-only: a command that may write $TMPDIR must not make it first.
	stateDir, err := placeholders.StateDir()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	in := plan.Input{
		Config: cfg, FS: fsview.OS{}, Cwd: filepath.Clean(o.dir), Home: filepath.Clean(home), UID: os.Getuid(), TmpDir: plan.PrivateTmp,
		Env: o.env, Command: []string{m.shell, "-c", command},
		Proxy: m.proxyPlan(key), Network: network, Helpers: []string{m.net.helper}, StateDir: stateDir,
		SettingsFiles: m.settingsFiles(home), MaskedFiles: masks.order, TmpdirBytes: applied.TmpdirBytes,
		BoundAs: boundAs,
	}
	p, run, err := m.planStarting(&in)
	if err != nil {
		return nil, err
	}
	p.Init.DevNullFD = o.nullFD
	p.Init.Rlimits = applied.Rlimits
	if p.Init.WatchListeners {
		// srt's own listeners inside, the ports led to the host and
		// those exposed already are not followed.
		p.Init.IgnorePorts = append(p.Init.IgnorePorts, settings.ReservedPorts()...)
		for _, ap := range c.loopAddrs {
			p.Init.IgnorePorts = append(p.Init.IgnorePorts, int(ap.Port()))
		}
		p.Init.IgnorePorts = append(p.Init.IgnorePorts, cfg.Network.ExposeLoopbackPorts...)
	}
	if err := addHostDevices(p); err != nil {
		return nil, err
	}
	c.plan = p
	// The exposed ports are the host's from now on: one in use stops the
	// command before anything runs.
	if err := c.listenExposed(cfg.Network.ExposeLoopbackPorts); err != nil {
		return nil, err
	}
	m.debugf("plan:\n%s", p)
	for _, w := range p.Warnings {
		m.warnOnce(w)
	}
	m.debugf("layers: %s", layersFor(cfg, m.kernel))
	m.debugf("%s", applied.Describe())
	for _, w := range layerWarnings(cfg, m.kernel) {
		fmt.Fprintf(m.opts.Warnings, "srt: warning: %s\n", w)
	}
	if cfg.EnableWeakerNestedSandbox {
		fmt.Fprintln(m.opts.Warnings, "srt: warning: enableWeakerNestedSandbox is on: the sandbox sees the host's /proc (every host process and its /proc files) and may create user namespaces; use it only where a fresh /proc cannot be mounted")
	}

	if err := c.claimPlaceholders(m, p); err != nil {
		return nil, err
	}
	if err := c.openChannel(run.init); err != nil {
		return nil, err
	}
	// The grants are opened and checked now, after the placeholders
	// exist, and bound by descriptor (see openGrants).
	grants, err := openGrants(p)
	if err != nil {
		return nil, err
	}
	if err := ns.Wait(); err != nil {
		for _, g := range grants {
			g.Close()
		}
		return nil, fmt.Errorf("sandbox: the sandbox's network namespace: %w", err)
	}
	firstFD := 0
	m.bwrapMu.Lock()
	checkedBwrap := m.bwrapChecked // the version checkPrograms read
	m.bwrapMu.Unlock()
	if checkedBwrap.HasBindFD() {
		firstFD = argsFD + 1
	} else {
		for _, g := range grants {
			g.Close()
		}
		if len(grants) > 0 {
			fmt.Fprintf(m.opts.Warnings, "srt: warning: bubblewrap %s has no --bind-fd (%s and later have it): the writable and re-allowed paths are bound by name, so a process that replaces one with a symlink while the sandbox starts can move the grant elsewhere; upgrade bubblewrap\n", checkedBwrap.Version, bwrap.BindFDVersion)
		}
		grants = nil
	}
	// The descriptors after the grants: the sandbox's resolv.conf, then
	// the namespaces nsenter enters.
	next := argsFD + 1 + len(grants)
	var resolv *os.File
	if p.ResolvConf != "" {
		p.ResolvFD, next = next, next+1
		if resolv, err = memFile("srt-resolv.conf", []byte(netns.ResolvConf)); err != nil {
			for _, g := range grants {
				g.Close()
			}
			return nil, err
		}
	}
	// Then the masked copies of credentials files: anonymous memory
	// files, so that nothing of them is on disk, or left after srt.
	var copies []*os.File
	for i := range p.MaskedFiles {
		var f *os.File
		if err == nil {
			f, err = memFile("srt-credmask", masks.files[p.MaskedFiles[i].Path])
		}
		if err == nil {
			copies = append(copies, f)
			p.MaskedFiles[i].FD, next = next, next+1
		}
	}
	enter, nsFiles := nsenterArgs(ns, next)
	// The passed descriptors come last; the init stage moves each to the
	// number the command gets it at.
	for i, pf := range o.pass {
		p.Init.PassFDs = append(p.Init.PassFDs, initstage.PassFD{From: next + len(nsFiles) + i, To: pf.n})
		c.pass = append(c.pass, pf)
	}
	// Then the filesystem rules for the observer.
	var rules *os.File
	if o.reportFS(m.opts) && err == nil {
		r := p.ObserveRules()
		p.Init.ObserveFD, p.Init.ObserveReads = next+len(nsFiles)+len(o.pass), p.ReadsDenied
		rules, err = memFile("srt-fs-rules", r.Encode())
	}
	var data []byte
	var args *os.File
	options, inside := p.BwrapArgs(initstage.ExePath, firstFD)
	if err == nil {
		data, err = argsData(options)
	}
	if err == nil {
		args, err = memFile("srt-bwrap-args", data)
	}
	if err != nil {
		for _, g := range append(grants, copies...) {
			g.Close()
		}
		for _, f := range []*os.File{resolv, rules} {
			if f != nil {
				f.Close()
			}
		}
		return nil, err
	}
	c.childEnds = append(c.childEnds, args)
	c.childEnds = append(c.childEnds, grants...)
	if resolv != nil {
		c.childEnds = append(c.childEnds, resolv)
	}
	c.childEnds = append(c.childEnds, copies...)
	// srt's copies of the namespaces stay with ns: not childEnds, which
	// Attach closes.
	extra := append(append([]*os.File(nil), c.childEnds...), nsFiles...)
	for _, pf := range o.pass {
		extra = append(extra, pf.f)
	}
	if rules != nil {
		c.childEnds = append(c.childEnds, rules)
		extra = append(extra, rules)
	}

	cmd := exec.CommandContext(ctx, run.nsenter, append(enter, append([]string{run.bwrap, "--args", fmt.Sprint(argsFD), "--"}, inside...)...)...)
	cmd.Dir = o.dir
	cmd.Env = o.env
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The first process, nsenter, starts in the limits' leaf: bubblewrap
	// and everything of the sandbox are in it from their first
	// instruction.
	if err := c.adopt(m, cmd, cfg.Limits, applied, cgroup, masks, key); err != nil {
		return nil, err
	}
	return c, nil
}

// adopt makes cmd, the process that starts the sandbox, c's: in the
// limits' cgroup leaf when there is one, ended by SIGTERM to the command
// when its context is, with the command's masks given to the decider.
func (c *Cmd) adopt(m *Manager, cmd *exec.Cmd, lim settings.Limits, applied *limits.Applied, cgroup *limits.Cgroup, masks *commandMasks, key string) error {
	c.limits = &limitRun{applied: applied, settings: lim}
	if applied.Leaf() {
		var err error
		if c.limits.leaf, err = limits.MakeLeaf(cgroup, applied); err != nil {
			return fmt.Errorf("sandbox: the cgroup of limits.memoryMiB and limits.processes: %w", err)
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, c.limits.leaf.FD()
	}
	cmd.Cancel = func() error { return c.Signal(unix.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	c.Cmd = cmd
	c.m, c.id = m, newToken()
	if len(masks.masks) > 0 {
		if err := m.sendMasks(key, masks.masks); err != nil {
			return err
		}
		c.maskKey = &key
	}
	c.done, c.readerDone, c.servedDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	return nil
}

// planStarting is plan, starting the network proxy first where the
// settings need it before anything runs. Under tlsTerminate the proxy
// starts now, not at the first connection: the plan binds the trust
// bundle it writes, and a CA that cannot be used is a settings error
// before anything runs; it starts only once the programs are checked
// against a plan, which is then made again with the bundle. Under
// mitmProxy it starts now too: a socketPath that is there but is no
// socket is a settings error before anything runs.
func (m *Manager) planStarting(in *plan.Input) (*plan.Plan, checked, error) {
	p, run, err := m.plan(in)
	if err != nil {
		return nil, checked{}, err
	}
	cfg := in.Config
	if cfg.Network.TLSTerminate != nil && m.net.ext.http == 0 && in.TrustBundle == "" {
		if _, err := m.egress(); err != nil {
			return nil, checked{}, err
		}
		if m.net.trust.Load() != nil {
			if p, run, err = m.plan(in); err != nil {
				return nil, checked{}, err
			}
		}
	}
	if cfg.Network.MitmProxy != nil {
		if _, err := m.egress(); err != nil {
			return nil, checked{}, err
		}
	}
	return p, run, nil
}

// plan builds a command's plan, with the trust files of the running
// proxy's TLS termination if any (the proxy that runs decides: it may
// have started under an earlier config), and checks against it the
// programs srt is about to run.
func (m *Manager) plan(in *plan.Input) (*plan.Plan, checked, error) {
	if t := m.net.trust.Load(); t != nil {
		in.TrustBundle, in.CACert, in.CAKey = t.bundle, t.caCert, t.caKey
	}
	p, err := plan.Build(*in)
	if err != nil {
		return nil, checked{}, err
	}
	// A root-run sandbox that may write "/" may change every program on
	// the host, srt's among them, as under filesystem.disabled: the check
	// against the plan could only refuse every run (docs/security.md).
	everything := in.Config.Filesystem.Disabled || in.UID == 0 && p.Root == plan.HostRW
	run, err := m.checkPrograms(p, everything)
	if err != nil {
		return nil, checked{}, err
	}
	return p, run, nil
}

// Start starts the sandbox. When it fails, Done is closed and the command
// cannot be started again.
func (c *Cmd) Start() error {
	if !c.startable() {
		return errNotStartable
	}
	err := c.checkStdioFiles()
	if err == nil {
		err = c.Cmd.Start()
	}
	if err != nil {
		c.endUnstarted()
		return err
	}
	c.Attach()
	return nil
}

// Argv is a sandboxed command for callers that start processes
// themselves: run Path with Args and Env in Dir, giving the child
// ExtraFiles as descriptors 3, 4, … (and stdin, stdout, stderr as they
// like), then call Attach. Wait for the process yourself; Done and Status
// report the command's end.
type Argv struct {
	Path       string
	Args       []string // Args[0] is the program name
	Env        []string
	Dir        string
	ExtraFiles []*os.File
	// UseCgroupFD: start the process in the cgroup of descriptor
	// CgroupFD (syscall.SysProcAttr's fields of the same names): the
	// leaf of limits.memoryMiB and limits.processes.
	UseCgroupFD bool
	CgroupFD    int
}

// Argv returns the command in the form of Argv.
func (c *Cmd) Argv() Argv {
	a := Argv{Path: c.Cmd.Path, Args: c.Cmd.Args, Env: c.Cmd.Env, Dir: c.Cmd.Dir, ExtraFiles: c.Cmd.ExtraFiles}
	if sp := c.Cmd.SysProcAttr; sp.UseCgroupFD {
		a.UseCgroupFD, a.CgroupFD = true, sp.CgroupFD
	}
	return a
}

// Attach is called once the process of Argv has started (Start calls it):
// it closes srt's copies of the child's descriptors and follows the
// sandbox's reports.
func (c *Cmd) Attach() {
	if !c.follow() {
		return
	}
	// The child has its copies; ours would keep the channel from ever
	// reaching end-of-file.
	for _, f := range c.childEnds {
		f.Close()
	}
	c.childEnds = nil
	go c.readChannel()
	c.serveExposed()
	go func() {
		defer close(c.servedDone)
		c.m.serveListeners(c, c.id)
	}()
	if c.plan.Init.WaitNetwork {
		go c.relayNetworkReady()
	}
	if c.limits != nil && c.limits.applied.Wall > 0 {
		go c.watchWall()
	}
}

// Run starts the sandbox and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Wait waits for bubblewrap to exit. It may be called more than once, and
// beside Release.
func (c *Cmd) Wait() error {
	err := c.reap()
	<-c.readerDone
	return err
}

// Done is closed when the command has finished inside the sandbox and
// nothing of the sandbox runs any more (or the sandbox is gone without
// saying so). Status then tells the command's exit status, possibly before
// bubblewrap itself has exited.
func (c *Cmd) Done() <-chan struct{} { return c.done }

// Status returns the command's exit status (128+N when killed by signal
// N) once Done is closed; ok is false when the sandbox never reported one.
func (c *Cmd) Status() (code int, ok bool) {
	select {
	case <-c.done:
		return c.exitCode, c.exited
	default:
		return 0, false
	}
}

// argsData is bubblewrap's arguments, NUL-separated, for an anonymous
// memory file (memFile): no argv size limit applies.
func argsData(args []string) ([]byte, error) {
	var buf bytes.Buffer
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: an argument contains a NUL byte: %q", a)
		}
		buf.WriteString(a)
		buf.WriteByte(0)
	}
	return buf.Bytes(), nil
}

// memFile is an anonymous memory file holding data, read from its start
// (bubblewrap's --args and --ro-bind-data).
func memFile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// claimPlaceholders makes the plan's placeholders (shared with the runs
// that need them too) and records their identities in the plan.
func (c *Cmd) claimPlaceholders(m *Manager, p *plan.Plan) error {
	if len(p.Placeholders) > 0 {
		reg, err := m.registry()
		if err != nil {
			return err
		}
		wants := make([]placeholders.Want, len(p.Placeholders))
		for i, ph := range p.Placeholders {
			wants[i] = placeholders.Want{Path: ph.Path, Dir: ph.Dir, Content: ph.Content}
		}
		if c.claim, err = reg.Acquire(wants); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		if len(c.claim.Missing) > 0 {
			p.DropPlaceholders(c.claim.Missing)
		}
		for _, ph := range p.Placeholders {
			if dev, ino, ok := c.claim.Identity(ph.Path); ok {
				p.SetID(ph.Path, plan.FileID{Dev: dev, Ino: ino})
			}
		}
	}
	return nil
}

// boundAs is the address a host Unix socket file was bound as (the plan
// refuses a listed socket moved to where it is listed: plan.Input.BoundAs).
func boundAs(id plan.FileID) (string, bool, error) { return unixgate.BoundAs(id.Dev, id.Ino) }
