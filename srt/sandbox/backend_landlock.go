//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/internal/limits"
	"github.com/srt-sandbox/srt/internal/llrules"
	"github.com/srt-sandbox/srt/internal/netns"
	"github.com/srt-sandbox/srt/internal/placeholders"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// The Landlock backend runs the init stage as srt's own child, with no
// bubblewrap and no namespace: the filesystem rules become Landlock
// grants (package llrules), the network is TCP to srt-proxy's ports on
// the host's loopback (Landlock's TCP rules, and seccomp refusing every
// other socket), and the init stage drops a root caller's capabilities.
// docs/architecture.md describes it, docs/security.md lists what it
// cannot do that bubblewrap does.

// weakerSummary is what the announcement says the backend lacks.
const weakerSummary = "no mount, PID, IPC or network namespace: the command sees the host's processes and their /proc files, connects over TCP only through its supervisor, to srt's proxies (and the spare listeners it offers an srt inside) and allowedDomains' loopback entries, gets no network at all outside the proxy variables (no transparent capture, no UDP), refuses some writes with EACCES where bubblewrap says EROFS or EXDEV, and makes new entries in a directory that holds a write-protected path through its supervisor (docs/security.md, \"The Landlock backend\")"

// backendChoice is the backend New settled on.
type backendChoice struct {
	name     string
	bwrap    bwrap.Info // bubblewrap's, found and checked
	announce string     // the one warning line, "" under bubblewrap
}

// chooseBackend picks the backend cfg asks for on this machine: Landlock
// when asked by name, or under "auto" when bubblewrap is not installed or
// user namespaces cannot be made here; bubblewrap otherwise. The Landlock backend is checked against the
// kernel (checkLandlockKernel): it refuses what it cannot enforce.
func chooseBackend(cfg *settings.Config, k kernelLayers) (backendChoice, error) {
	name := cfg.Backend
	if name == "" {
		name = settings.BackendAuto
	}
	if name != settings.BackendLandlock {
		info, err := bwrap.Find(cfg.BwrapPath)
		if err != nil {
			if name == settings.BackendBubblewrap {
				return backendChoice{}, err
			}
			// Not installed (or bwrapPath names nothing runnable): under
			// "auto" the Landlock backend runs instead.
			return landlockChoice(cfg, k, err.Error(), "bubblewrap cannot be used")
		}
		if _, err := (hostProgram{"bwrap", info.Path, bwrapFix(cfg.BwrapPath)}).resolve(); err != nil {
			return backendChoice{}, err
		}
		err = bwrap.CheckEnvironment()
		if err == nil && name == settings.BackendAuto {
			err = userNamespacesWork(info)
		}
		switch {
		case err == nil:
			return backendChoice{name: settings.BackendBubblewrap, bwrap: info}, nil
		case name == settings.BackendBubblewrap:
			return backendChoice{}, err
		}
		why := strings.TrimSuffix(err.Error(), ": "+bwrap.ErrCannotSandbox.Error())
		return landlockChoice(cfg, k, why, "bubblewrap cannot make a sandbox here")
	}
	return landlockChoice(cfg, k, "", "")
}

// landlockChoice is the Landlock backend, checked against the kernel;
// why (under "auto") is the reason bubblewrap cannot run, and lead how
// the announcement says it.
func landlockChoice(cfg *settings.Config, k kernelLayers, why, lead string) (backendChoice, error) {
	weak, err := checkLandlockKernel(cfg, k)
	if err != nil {
		if why != "" {
			other := "or do what the Landlock backend's refusal says"
			if k.landlockABI == 0 {
				other = "or run on a kernel with Landlock enabled (Linux 5.13 or later, landlock in the lsm= kernel parameter)"
			}
			return backendChoice{}, fmt.Errorf("srt has no backend that can run here: bubblewrap cannot (%s), and its Landlock backend cannot either (%w); "+
				"install bubblewrap where user namespaces are allowed (scripts/install, or the distribution's package bubblewrap), %s", why, err, other)
		}
		return backendChoice{}, err
	}
	announce := "srt runs the command under its Landlock backend (backend \"landlock\"), weaker than bubblewrap's: " + weakerSummary
	if why != "" {
		announce = lead + " (" + why + "), so " + announce
	}
	for _, w := range weak {
		announce += fmt.Sprintf("; allowWeaker %q: the command may %s", w.Name, w.What)
	}
	return backendChoice{name: settings.BackendLandlock, announce: announce}, nil
}

// userNamespacesWork says whether a user namespace can be made from here,
// where a seccomp filter (a container's profile, an outer srt sandbox) or
// AppArmor's restriction may refuse one although the sysctls allow it.
// Where neither applies it runs nothing: the common case stays free.
func userNamespacesWork(info bwrap.Info) error {
	filtered := false
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "Seccomp:"); ok && strings.TrimSpace(v) != "0" {
				filtered = true
			}
		}
	}
	apparmor := false
	if os.Geteuid() != 0 && !info.Setuid {
		if data, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(data)) == "1" {
			apparmor = true
		}
	}
	if !filtered && !apparmor {
		return nil
	}
	if apparmor {
		// Only bubblewrap itself tells whether its profile lets it.
		return bwrap.Diagnose(info)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil // nothing to probe with: bubblewrap will say
	}
	cmd := exec.Command(truePath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("this process may not create user namespaces (%v: a container's seccomp profile, or srt already inside a sandbox): %w", err, bwrap.ErrCannotSandbox)
	}
	return nil
}

// checkLandlockKernel refuses to run the Landlock backend where the kernel
// lacks what a rule needs, unless allowWeaker names that rule; it returns
// the rules the command goes without.
func checkLandlockKernel(cfg *settings.Config, k kernelLayers) ([]settings.Weaker, error) {
	if k.landlockABI == 0 {
		return nil, fmt.Errorf("srt's Landlock backend needs Landlock, and this kernel has none (%v): %s; no allowWeaker name runs it without: %w", k.landlockErr, landlockHint(k.landlockErr), ErrCannotSandbox)
	}
	if k.seccompArch == "" {
		return nil, fmt.Errorf("srt's Landlock backend needs seccomp filters (UDP and raw sockets, namespaces), and srt has none for this architecture: %w", ErrCannotSandbox)
	}
	if k.seccompErr != nil {
		return nil, fmt.Errorf("%w; srt's Landlock backend needs seccomp filters: %w", k.seccompErr, ErrCannotSandbox)
	}
	allowed := map[string]bool{}
	for _, n := range cfg.AllowWeaker {
		allowed[n] = true
	}
	var weak []settings.Weaker
	for _, w := range settings.WeakerNames {
		if w.Name == "root" {
			if os.Geteuid() != 0 {
				continue
			}
			if !allowed[w.Name] {
				return nil, fmt.Errorf("srt's Landlock backend cannot keep a command run as uid 0 from changing the mode of files root owns anywhere on the host (Landlock does not cover chmod, and the file's owner needs no capability for it); run srt as a regular user, or accept it by name: srt --allow-weaker=root (or \"allowWeaker\": [\"root\"]): %w", ErrCannotSandbox)
			}
			weak = append(weak, w)
			continue
		}
		if k.landlockABI >= w.ABI {
			continue
		}
		if !allowed[w.Name] {
			return nil, fmt.Errorf("srt's Landlock backend enforces %q with Landlock ABI %d, and this kernel has ABI %d: without it the command could %s; use a newer kernel, or run without it by name: srt --allow-weaker=%s (or \"allowWeaker\": [%q] in the settings): %w",
				w.Name, w.ABI, k.landlockABI, w.What, w.Name, w.Name, ErrCannotSandbox)
		}
		weak = append(weak, w)
	}
	return weak, nil
}

// landlockRun is the Landlock backend's part of a command.
type landlockRun struct {
	tmpDir string // the private TMPDIR, removed by Release
	ports  proxyPorts
	spares *spares // offered to an srt inside; closed by Release
	// fromOuter: the proxies listen on an outer srt's spares, given
	// back by Release.
	fromOuter bool
}

// proxyPorts are the command's: the fixed ones inside a network
// namespace, those srt chose on the host's loopback without one.
func (c *Cmd) proxyPorts() proxyPorts {
	if c.ll != nil {
		return c.ll.ports
	}
	return proxyPorts{httpProxyPort, socksProxyPort}
}

// landlockCommand is Command under the Landlock backend.
func (m *Manager) landlockCommand(ctx context.Context, command string, o *commandOptions, cfg *settings.Config, home string, applied *limits.Applied, cgroup *limits.Cgroup) (c *Cmd, err error) {
	c = &Cmd{ll: &landlockRun{}}
	made := c
	defer func() {
		if err != nil {
			made.Release()
		}
	}()
	key := o.id
	if key == "" {
		key = command
	}
	m.net.mu.Lock()
	own := m.net.lists[o.id]
	m.net.mu.Unlock()
	c.loopAddrs, c.loopback = loopbackEntries(cfg.Network.AllowedDomains, own)
	files, ports, inherited, err := landlockListeners()
	if err != nil {
		return nil, err
	}
	hp := hostProxyOn(files, ports, key, m.net.token)
	c.ll.fromOuter = inherited
	if inherited {
		m.debugf("the proxies listen on the spare listeners of the outer srt (%s): ports %d and %d", initstage.ListenersVar, ports.http, ports.socks)
	}
	// The command's environment never carries an outer srt's offer on:
	// its spares are taken (above) or belong to another srt.
	o.env = withoutVar(o.env, initstage.ListenersVar)
	c.ns, c.user, c.ll.ports = netns.HostListeners(hp.files), hp.proxy.User, ports
	m.sweepIfNeeded()
	text := o.text
	if text == "" {
		text = command
	}
	m.net.remember(srtlink.KeyLabel(key), text)
	masks, err := m.commandMasks(cfg, o.env, home, filepath.Clean(o.dir), newToken()[:16])
	if err != nil {
		return nil, err
	}
	o.env, cfg = masks.env, masks.config(cfg)
	stateDir, err := placeholders.StateDir()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// The private TMPDIR: a directory of srt's own, which only this
	// command may write, and which Release removes.
	if c.ll.tmpDir, err = os.MkdirTemp(stateDir, "tmp-"); err != nil {
		return nil, fmt.Errorf("sandbox: the command's TMPDIR: %w", err)
	}
	if err := os.Chmod(c.ll.tmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: the command's TMPDIR: %w", err)
	}
	proxy := m.proxyPlan(key)
	proxy.HTTPPort, proxy.SOCKSPort = hp.proxy.HTTPPort, hp.proxy.SOCKSPort
	in := plan.Input{
		Config: cfg, FS: fsview.OS{}, Cwd: filepath.Clean(o.dir), Home: home, UID: os.Getuid(), TmpDir: c.ll.tmpDir,
		Env: o.env, Command: []string{m.shell, "-c", command},
		Proxy: proxy, Helpers: []string{m.net.helper}, StateDir: stateDir,
		SettingsFiles: m.settingsFiles(home), MaskedFiles: masks.order, BoundAs: boundAs,
	}
	p, run, err := m.planStarting(&in)
	if err != nil {
		return nil, err
	}
	c.plan = p
	m.debugf("plan:\n%s", p)
	for _, w := range p.Warnings {
		m.warnOnce(w)
	}
	for _, mf := range p.MaskedFiles {
		m.warnOnce(fmt.Sprintf("the Landlock backend cannot show the masked copy of %s in its place (credentials.files, mode \"mask\"): the file is unreadable in the sandbox instead", mf.Path))
	}
	if err := c.claimPlaceholders(m, p); err != nil {
		return nil, err
	}
	if err := c.openChannel(run.init); err != nil {
		return nil, err
	}
	rules, reads := landlockRules(p, c.ll.tmpDir, cfg)
	grants, chains, err := landlockGrants(rules, reads)
	if err != nil {
		return nil, err
	}
	data := initstage.EncodeGrants(grants)
	grantsFile, err := memFile("srt-landlock-grants", data)
	if err != nil {
		return nil, err
	}
	c.childEnds = append(c.childEnds, grantsFile)
	next := initstage.ExeFD + 2 // after the channel, the executable and the grants
	chainFD := 0
	if len(chains) > 0 {
		chainsFile, err := memFile("srt-landlock-chains", initstage.EncodeChains(chains))
		if err != nil {
			return nil, err
		}
		c.childEnds = append(c.childEnds, chainsFile)
		chainFD = next
		next++
		m.debugf("chain directories (the init stage makes their entries): %d", len(chains))
	}

	spec := p.Init
	spec.Landlock, spec.LandlockScopeOnly, spec.WritePaths = false, false, nil
	spec.CheckMounts, spec.HostDevs, spec.Writable = false, nil, nil
	spec.WaitNetwork, spec.WatchListeners, spec.IgnorePorts = false, false, nil
	spec.DevNullFD = o.nullFD
	connect := []int{ports.http, ports.socks}
	// Spare listeners for an srt inside, where binding is refused to the
	// command (the TCP rules) and this srt could bind its own.
	var sparesFD int
	if m.kernel.landlockABI >= 4 && !inherited {
		if c.ll.spares, err = offerSpares(); err != nil {
			return nil, err
		}
		connect = append(connect, c.ll.spares.ports.http, c.ll.spares.ports.socks)
		sparesFD = next
		next++
		m.debugf("spare listeners for an srt inside: ports %d and %d", c.ll.spares.ports.http, c.ll.spares.ports.socks)
	}
	// The destinations themselves, which the init stage's supervisor
	// holds every connect to: the proxies and the spare listeners listen
	// on 127.0.0.1 and ::1 (hostListeners).
	var connectTo []netip.AddrPort
	for _, port := range connect {
		connectTo = append(connectTo, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)),
			netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port)))
	}
	// A process with seccomp filters of its own (an srt inside's
	// command) reaches only the spare listeners.
	var nestedTo []netip.AddrPort
	if c.ll.spares != nil {
		for _, port := range []int{c.ll.spares.ports.http, c.ll.spares.ports.socks} {
			nestedTo = append(nestedTo, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)),
				netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port)))
		}
	}
	for _, ap := range c.loopAddrs {
		connect = append(connect, int(ap.Port()))
		connectTo = append(connectTo, ap)
	}
	spec.NoNS = initstage.NoNS{On: true, GrantsFD: initstage.ExeFD + 1, ChainFD: chainFD, Reads: reads, Net: m.kernel.landlockABI >= 4,
		ConnectPorts: connect, BindPorts: cfg.Network.ExposeLoopbackPorts, ConnectTo: connectTo, NestedTo: nestedTo, InOuter: inherited,
		ScopeSignals: m.kernel.landlockABI >= 6, InetTCPOnly: true}
	extra := append([]*os.File(nil), c.childEnds...)
	var sparesSlot int
	if sparesFD > 0 {
		extra = append(extra, c.ll.spares.end)
		// Above every descriptor a command may be given.
		sparesSlot = max(MaxPassFD, o.nullFD) + 1
		spec.NoNS.Listeners = []initstage.PassFD{{From: sparesFD, To: sparesSlot}}
	}
	if o.reportFS(m.opts) {
		r := p.ObserveRules()
		var f *os.File
		if f, err = memFile("srt-fs-rules", r.Encode()); err != nil {
			return nil, err
		}
		spec.ObserveFD, spec.ObserveReads = next, p.ReadsDenied
		next++
		c.childEnds = append(c.childEnds, f)
		extra = append(extra, f)
	}
	for i, pf := range o.pass {
		spec.PassFDs = append(spec.PassFDs, initstage.PassFD{From: next + i, To: pf.n})
		c.pass = append(c.pass, pf)
		extra = append(extra, pf.f)
	}
	spec.Rlimits = applied.Rlimits
	p.Init = spec
	m.debugf("%s", applied.Describe())

	cmd := exec.CommandContext(ctx, run.init, initstage.Args(spec, p.Command)...)
	cmd.Dir = o.dir
	cmd.Env = applyEnv(o.env, p)
	if sparesSlot > 0 {
		cmd.Env = append(withoutVar(cmd.Env, initstage.ListenersVar), initstage.ListenersVar+"="+strconv.Itoa(sparesSlot))
	}
	cmd.ExtraFiles = extra
	// No Pdeathsig, unlike bubblewrap's: killed with srt, the init stage
	// would leave the command's processes running (no PID namespace
	// takes them down). Once srt is gone the channel reads end-of-file,
	// and the init stage kills and reaps them all before it exits. A new
	// session, as bubblewrap's --new-session: no controlling terminal,
	// so /dev/tty is not the caller's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The init stage starts in the limits' leaf, and so everything of the
	// sandbox.
	if err := c.adopt(m, cmd, cfg.Limits, applied, cgroup, masks, key); err != nil {
		return nil, err
	}
	return c, nil
}

// applyEnv is env with the plan's variables set and unset, as bubblewrap's
// --setenv and --unsetenv would; the trust bundle is named at its host
// path (bubblewrap binds it at plan.TrustBundlePath).
func applyEnv(env []string, p *plan.Plan) []string {
	out := append([]string(nil), env...)
	for _, e := range p.Env {
		kept := out[:0]
		for _, kv := range out {
			if name, _, _ := strings.Cut(kv, "="); name != e.Name {
				kept = append(kept, kv)
			}
		}
		out = kept
		if !e.Unset {
			v := e.Value
			if p.TrustBundle != "" {
				v = strings.ReplaceAll(v, plan.TrustBundlePath, p.TrustBundle)
			}
			out = append(out, e.Name+"="+v)
		}
	}
	return out
}

// landlockRules are the plan's filesystem rules for Landlock: the
// observer's view of the plan (what bubblewrap would mount), with the
// private TMPDIR writable, the trust bundle readable at its host path,
// and each masked credentials file hidden (no copy can stand in its
// place). reads says whether any read is refused at all.
func landlockRules(p *plan.Plan, tmp string, cfg *settings.Config) (*initstage.FSRules, bool) {
	r := p.ObserveRules()
	// The plan's guards under /proc and /dev are bubblewrap's own /proc
	// and /dev (its kernel covers, the trust bundle's path): here those
	// are the host's, read-only as a whole, and so is /sys, even where
	// "/" is writable (allowWrite "/", filesystem.disabled), as
	// bubblewrap keeps them. Their entries cannot be carved: /proc's
	// process directories are made after the start (/proc/self).
	kept := r.Guards[:0]
	for _, g := range r.Guards {
		if !llrulesWithin(g.Path, "/proc") && !llrulesWithin(g.Path, "/dev") {
			kept = append(kept, g)
		}
	}
	r.Guards = kept
	// A placeholder file that bubblewrap covers with /dev/null (a
	// mandatory path that did not exist: .bashrc, .gitconfig, ...) is
	// srt's own empty file here: read-only, as good as hidden, and then
	// the working directory holds nothing hidden (no chain of the reads:
	// the files the command makes there are readable).
	empty := map[string]bool{}
	for _, ph := range p.Placeholders {
		if !ph.Dir && ph.Content == "" && !ph.Existing {
			empty[ph.Path] = true
		}
	}
	for i, g := range r.Guards {
		if g.View == initstage.ViewHidden && empty[g.Path] {
			r.Guards[i].View = initstage.ViewReadOnly
		}
	}
	add := func(path string, v byte) { r.Guards = append(r.Guards, initstage.Guard{Path: path, View: v}) }
	for _, t := range []string{"/proc", "/dev", "/sys"} {
		add(t, initstage.ViewReadOnly)
	}
	for _, mf := range p.MaskedFiles {
		add(mf.Path, initstage.ViewHidden)
	}
	// A symlink on the way to a protected path, in a writable directory:
	// its name is protected too (no mount could cover it; Landlock and
	// the chain supervisor decide by name, and refuse to remove or
	// replace it).
	for _, l := range p.ProtectedLinks {
		add(l, initstage.ViewReadOnly)
	}
	if p.TrustBundle != "" {
		add(p.TrustBundle, initstage.ViewReadOnly)
	}
	if !cfg.Filesystem.Disabled {
		add(tmp, initstage.ViewWritable)
	}
	return r, r.Hides()
}

// devWrites are the devices of the host's /dev a command may write (and
// send ioctls to): its terminal, the null and random devices. The rest of
// /dev, /dev/shm included (shared with every host process), is read-only.
var devWrites = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// landlockGrants computes the grants of rules (llrules), and the writes
// of devWrites in the host's /dev; and the chain directories, whose
// entries the init stage's supervisor changes for the command.
func landlockGrants(rules *initstage.FSRules, reads bool) ([]initstage.Grant, []initstage.Chain, error) {
	gs, chains, err := llrules.Compute(fsview.OS{}, rules, reads, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	out := make([]initstage.Grant, 0, len(gs)+len(devWrites)+2)
	for _, g := range gs {
		var r byte
		for _, l := range g.Rights {
			switch l {
			case llrules.Read:
				r |= initstage.GrantRead
			case llrules.List:
				r |= initstage.GrantList
			case llrules.Write:
				r |= initstage.GrantWrite
			}
		}
		out = append(out, initstage.Grant{Path: g.Path, Rights: r})
	}
	for _, d := range devWrites {
		out = append(out, initstage.Grant{Path: d, Rights: initstage.GrantWrite})
	}
	cs := make([]initstage.Chain, len(chains))
	for i, c := range chains {
		cs[i] = initstage.Chain{Path: c.Path, Protected: c.Protected, Reads: c.Reads}
	}
	return out, cs, nil
}

// releaseLandlock removes what the Landlock backend made for the command.
func (c *Cmd) releaseLandlock() {
	if c.ll != nil && c.ll.tmpDir != "" {
		os.RemoveAll(c.ll.tmpDir)
	}
	if c.ll != nil {
		c.ll.spares.close()
		c.ll.spares = nil
		if c.ll.fromOuter {
			c.ll.fromOuter = false
			giveBack()
		}
	}
}

func llrulesWithin(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
