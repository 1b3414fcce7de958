package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

// MaxMounts bounds the mounts one plan may need. Each is a kernel mount
// made at every start; a glob that expands to more than this is a mistake,
// or a sandbox's doing (see overflow.go).
const MaxMounts = 10000

// ErrTooManyMounts is returned (wrapped) when the rules need more than
// MaxMounts mounts and not beneath a directory a sandbox may write, where
// srt would hide the directory holding them instead.
var ErrTooManyMounts = errors.New("too many mounts")

// ErrGlobTooBroad is returned (wrapped) when a deny pattern would need a
// walk of more entries than srt allows, and not beneath a directory a
// sandbox may write, where srt would hide the directory holding them
// instead: a deny that cannot be expanded fully would protect only part of
// what it names.
var ErrGlobTooBroad = errors.New("deny pattern walks too many entries")

type builder struct {
	in      Input
	limits  Limits
	t       *tree
	p       *Plan
	protect []protect
	// readDenied are the real paths that denyRead, credentials.files and
	// the CA key hide: their writable ancestors are pinned.
	readDenied []string
	// warned records the symlinks already named in a warning, by entry.
	warned map[string]bool
	// hidden are the directories hidden whole, and sealed those
	// write-protected whole, because a deny pattern's expansion
	// overflowed in them (overflow.go): later expansions skip them.
	hidden, sealed map[string]bool
	// entries are the settings entries by field, for messages.
	entries map[string]string
	// missing are the entries of the user's lists that name no existing
	// path, by list (missing.go).
	missing map[string][]string
}

// Build computes the plan for in. It reads the filesystem through in.FS and
// does nothing else.
func Build(in Input) (*Plan, error) {
	cfg := in.Config
	b := &builder{in: in, limits: in.Limits.orDefaults(), warned: map[string]bool{}, hidden: map[string]bool{}, sealed: map[string]bool{}, entries: map[string]string{}, missing: map[string][]string{}, p: &Plan{
		ProcBind:    cfg.EnableWeakerNestedSandbox,
		Command:     in.Command,
		TmpdirBytes: in.TmpdirBytes,
	}}
	fsCfg := cfg.Filesystem
	b.t = newTree(fsCfg.Disabled)
	if !fsCfg.Disabled {
		if err := b.rules(); err != nil {
			return nil, err
		}
	} else {
		// srt's own settings stay out of reach even then, as its state
		// directory and tlsTerminate's key do.
		b.protect = b.settingsFiles()
		b.applyProtects()
	}
	if err := b.caFiles(); err != nil {
		return nil, err
	}
	b.ownState()
	if err := b.mounts(); err != nil {
		return nil, err
	}
	b.p.rootWhy = b.rootWhy()
	b.kernelMounts()
	b.env()
	var writable []FileID
	for _, m := range b.p.Mounts {
		if m.Grant && m.View == HostRW && !m.Created { // SetID adds the others
			writable = append(writable, m.ID)
		}
	}
	b.p.Init = initstage.Spec{
		// With "/" writable there is no grant to redirect; otherwise the
		// init stage checks that every writable mount is a grant (the
		// executor adds the host's devices: see initstage.checkMounts).
		CheckMounts:      b.p.Root != HostRW,
		Writable:         writable,
		BlockUnixSockets: !cfg.Network.AllowAllUnixSockets && len(cfg.Network.AllowUnixSockets) == 0,
		BlockNamespaces:  !cfg.AllowNestedUserNamespaces,
		// With the filesystem rules off everything is writable: Landlock
		// would have nothing to refuse.
		Landlock:    !fsCfg.Disabled,
		WritePaths:  b.writePaths(),
		WaitNetwork: in.Network != nil && in.Network.Capture,
		// A landlocked process may not change mounts, which a nested
		// sandbox must: allowNestedUserNamespaces keeps only Landlock's
		// scope. The mounts a nested namespace inherits from this one stay
		// locked by the kernel (docs/security.md).
		LandlockScopeOnly: cfg.AllowNestedUserNamespaces,
		RequireLandlock:   cfg.RequireLandlock,
		WatchListeners:    cfg.Network.AllowLocalBinding,
	}
	if b.p.Init.LandlockScopeOnly {
		b.p.Init.WritePaths = nil
	}
	unixSockets, err := b.unixSockets()
	if err != nil {
		return nil, err
	}
	b.p.Init.UnixSockets = unixSockets
	b.p.TrustBundle = in.TrustBundle
	if in.Network != nil {
		b.p.SharedNet = true
		if in.Network.ResolvConf != "" {
			b.resolvConf()
		}
	}
	// A masked file the rules hide stays hidden: its copy is not bound.
	for _, f := range in.MaskedFiles {
		if b.t.readable(f) {
			b.p.MaskedFiles = append(b.p.MaskedFiles, MaskedFile{Path: f})
		} else {
			b.note("credentials.files: %s is hidden by the rules, so its masked copy is not shown", f)
		}
	}
	// A helper is bound in only where the rules hide it: every mount costs
	// start-up time.
	for _, h := range in.Helpers {
		if !b.t.readable(h) {
			b.p.Helpers = append(b.p.Helpers, h)
		}
	}
	return b.p, nil
}

// unixSockets are network.allowUnixSockets as the init stage compares
// them: "~/" expanded, cleaned, symlinks resolved (the init stage names a
// socket by the path without symlinks; of an entry that does not exist
// yet, the part that exists). None under allowAllUnixSockets, which allows
// all.
//
// An entry the command could replace (it may write the directory holding
// it, or one above: see replaceable) cannot be trusted by its name: the
// command could rename any host socket of its writable space over it. A
// socket file there is pinned, only that file may be reached; anything
// else there (nothing yet, a file that is no socket) is pinned to nothing,
// with a warning; a directory there is an error, as every socket moved
// into it would be reached.
func (b *builder) unixSockets() ([]initstage.UnixSocket, error) {
	n := b.in.Config.Network
	if n.AllowAllUnixSockets {
		return nil, nil
	}
	var out []initstage.UnixSocket
	for i, e := range n.AllowUnixSockets {
		field := fmt.Sprintf("network.allowUnixSockets.%d", i)
		p := e
		if rest, ok := strings.CutPrefix(e, "~/"); ok {
			p = filepath.Join(b.in.Home, rest)
		}
		p = filepath.Clean(p)
		if existing, missing, err := fsview.ResolveExisting(b.in.FS, p); err == nil {
			p = filepath.Join(existing, missing)
		}
		u := initstage.UnixSocket{Path: p}
		fi, err := b.in.FS.Lstat(p)
		isDir := err == nil && fi.IsDir()
		// A directory the command may write takes the sockets moved into
		// it; any entry may be replaced where it lies. (srt pins the
		// directories above a denyWrite entry, so making the directory
		// read-only is enough.)
		dir, rule, ok := p, "", false
		if isDir {
			rule, ok = b.p.Writable(p)
		}
		if !ok {
			dir, rule, ok = b.p.replaceable(p)
		}
		if !ok {
			out = append(out, u)
			continue
		}
		u.Pinned = true
		switch {
		case isDir:
			return nil, fmt.Errorf("%s %q: %s is a directory, and the sandbox may write %s (%s): the command could move any host socket it may rename into the directory and reach it; list the socket files in it instead (srt pins each to the socket there when the command starts), or keep %s read-only (filesystem.denyWrite)", field, e, p, dir, rule, dir)
		case err == nil && fi.Mode()&fs.ModeSocket != 0 && idOf(fi) != nil:
			if name, moved, err := b.movedSocket(p, *idOf(fi)); err != nil {
				b.warn("%s: srt cannot tell whether the socket at %s is the one its daemon bound there (%v), and the sandbox may write %s (%s): no host socket is reached there in this run", field, p, err, dir, rule)
				break
			} else if moved {
				b.warn("%s: the socket at %s was bound as %q: it was moved there (an earlier sandbox may have: the sandbox may write %s, by %s), so no host socket is reached there in this run (restart its daemon, which makes its socket there again)", field, p, name, dir, rule)
				break
			}
			u.ID, u.Changed = idOf(fi), changedOf(fi)
		default:
			b.warn("%s: %s is no socket now, and the sandbox may write %s (%s): a socket put there later cannot be told from one the command moves there, so no host socket is reached at %s in this run (start its daemon before srt; a socket the command binds there itself still works)", field, p, dir, rule, p)
		}
		out = append(out, u)
	}
	return out, nil
}

// movedSocket says whether the socket file id at p belongs to a listening
// socket bound at another path (name): renamed or linked there, by a
// command of an earlier sandbox perhaps. A socket no one listens on (or
// one srt cannot see, of another network namespace) is not found, and is
// taken as it is: srt pins it.
func (b *builder) movedSocket(p string, id FileID) (string, bool, error) {
	if b.in.BoundAs == nil {
		return "", false, nil
	}
	name, found, err := b.in.BoundAs(id)
	if err != nil || !found {
		return "", false, err
	}
	bound := name
	if filepath.IsAbs(name) {
		bound = filepath.Clean(name)
		if existing, missing, err := fsview.ResolveExisting(b.in.FS, filepath.Dir(bound)); err == nil {
			bound = filepath.Join(existing, missing, filepath.Base(bound))
		}
	}
	return name, bound != p, nil
}

// replaceable says whether the command could change the file path names:
// it may write the directory holding path, or holding one of the
// directories above it, that is no mount point (a mount point cannot be
// renamed; the directories above it still can, and take it along). It
// returns the directory it may write, and the rule that lets it.
func (p *Plan) replaceable(path string) (dir, rule string, ok bool) {
	for c := path; c != "/" && c != "."; c = filepath.Dir(c) {
		if p.MountPoint(c) {
			continue
		}
		if rule, ok := p.Writable(filepath.Dir(c)); ok {
			return filepath.Dir(c), rule, true
		}
	}
	return "", "", false
}

func (b *builder) warn(format string, args ...any) {
	b.p.Warnings = append(b.p.Warnings, fmt.Sprintf(format, args...))
}

func (b *builder) note(format string, args ...any) {
	b.p.Notes = append(b.p.Notes, fmt.Sprintf(format, args...))
}

// rules turns the filesystem settings into nodes.
func (b *builder) rules() error {
	// Writes first: a deny pattern whose expansion overflows denies whole
	// the directory beneath a write grant that filled it (overflow.go), so
	// the grants must be known. No allowWrite or denyWrite entry depends
	// on a read rule (the default write path does, and comes after).
	allowWrite, denyWrite, denyRead, credDeny, allowRead := b.lists()
	for _, s := range allowWrite {
		b.allowWrite(s)
	}
	for _, s := range denyWrite {
		if err := b.denyWrite(s); err != nil {
			return err
		}
	}
	for _, s := range denyRead {
		if err := b.read(s, true, false); err != nil {
			return err
		}
	}
	for _, s := range credDeny {
		if err := b.read(s, true, true); err != nil {
			return err
		}
	}
	for _, s := range allowRead {
		if err := b.read(s, false, false); err != nil {
			return err
		}
	}
	// ssh refuses config files it does not own, and inside the user
	// namespace of a user other than root the host's root-owned files are
	// owned by nobody: hide the drop-in directory when it has any.
	if b.in.UID != 0 {
		if n, ok := b.existing("/etc/ssh/ssh_config.d"); ok {
			if ents, err := b.in.FS.ReadDir(n.path); err == nil && len(ents) > 0 {
				b.mark(n, "ssh_config.d", func(n *node) { n.readDeny = true })
			}
		}
	}
	// Default write paths, unless a read deny hides them.
	npm := spelled{field: "the default write path", entry: "~/.npm/_logs", base: b.in.Home, rest: ".npm/_logs", abs: filepath.Join(b.in.Home, ".npm/_logs")}
	if real, fi, ok, _ := b.grant(npm, npm.abs); ok && b.t.readable(real) {
		n := b.t.get(real, fi.IsDir())
		n.identify(idOf(fi))
		b.mark(n, "default write path", func(n *node) { n.writeAllow = true })
	}
	b.protect = append(b.protect, b.settingsFiles()...)
	b.protect = append(b.protect, b.mandatory()...)
	b.applyProtects()
	b.warnMissing()
	return nil
}

// caFiles applies tlsTerminate's CA files: the key hidden as a
// credentials.files deny is (no allow re-opens it, and it holds even with
// the filesystem rules off), the certificate re-allowed as an allowRead.
func (b *builder) caFiles() error {
	if b.in.CACert != "" && !b.in.Config.Filesystem.Disabled {
		if err := b.read(spellAbs("network.tlsTerminate.caCertPath", b.in.CACert), false, false); err != nil {
			return err
		}
	}
	if b.in.CAKey != "" {
		return b.read(spellAbs("network.tlsTerminate.caKeyPath", b.in.CAKey), true, true)
	}
	return nil
}

func (b *builder) mark(n *node, why string, f func(*node)) {
	f(n)
	n.why = append(n.why, why)
}

// existing returns the node for the real path of p if p exists.
func (b *builder) existing(p string) (*node, bool) {
	real, fi, err := fsview.Stat(b.in.FS, p)
	if err != nil {
		return nil, false
	}
	return b.t.get(real, fi.IsDir()), true
}

// read adds the targets of a denyRead (deny) or allowRead entry.
func (b *builder) read(s spelled, deny, strong bool) error {
	if s.dotdot {
		if deny {
			return fmt.Errorf("%s %q: a \"..\" after a wildcard cannot be expanded; write the path without it: %w", s.field, s.entry, settings.ErrInvalid)
		}
		b.warn("%s %q has a \"..\" after a wildcard, which srt does not expand, so the entry re-allows nothing; write the path without it", s.field, s.entry)
		return nil
	}
	r := roleAllow
	if deny {
		r = roleHide
	}
	targets, err := b.targets(s, r)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if deny {
			b.p.ReadsDenied = true
		}
		if t.path == "/" && deny {
			b.denyRoot(s, strong)
			continue
		}
		if deny && t.links > 1 {
			b.warn("%s %q names %s, which has %d hard links: the denied path cannot be read, but the file's other names can; deny their directories too, or remove the extra links", s.field, s.entry, t.path, t.links)
		}
		if deny {
			b.readDenied = append(b.readDenied, t.path)
		}
		n := b.t.get(t.path, t.isDir)
		if !deny {
			n.identify(t.id)
		}
		why := s.field
		if t.whole {
			why += " (hidden whole)"
		}
		b.mark(n, why, func(n *node) {
			switch {
			case strong || t.whole:
				n.strongDeny = true
			case deny:
				n.readDeny = true
			default:
				n.readAllow = true
			}
		})
	}
	return nil
}

// denyRoot denies "/" as each top-level entry but the kernel filesystems
// the sandbox gets fresh copies of.
func (b *builder) denyRoot(s spelled, strong bool) {
	ents, err := b.in.FS.ReadDir("/")
	if err != nil {
		return
	}
	for _, e := range ents {
		switch e.Name() {
		case "proc", "dev", "sys":
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			continue // /bin -> usr/bin: its target's own top-level entry covers it
		}
		if n, ok := b.existing("/" + e.Name()); ok && n.path != "/" {
			b.mark(n, s.field, func(n *node) { n.readDeny, n.strongDeny = n.readDeny || !strong, n.strongDeny || strong })
		}
	}
}

// allowWrite adds an allowWrite entry. Patterns are not expanded for
// writes; one that names an existing path literally grants that path.
func (b *builder) allowWrite(s spelled) {
	if s.pattern {
		if _, err := b.in.FS.Lstat(s.abs); s.dotdot || err != nil {
			b.warn("%s %q is a pattern; srt grants writes only to paths, so this entry grants nothing", s.field, s.entry)
			return
		}
	}
	real, fi, ok, refused := b.grant(s, s.abs)
	if !ok {
		if !refused {
			b.missingPath(s)
		}
		return
	}
	if underKernelFS(real) {
		b.warn("%s %q names %s; /proc and /sys are read-only in every sandbox, so the entry grants nothing", s.field, s.entry, real)
		return
	}
	n := b.t.get(real, fi.IsDir())
	n.identify(idOf(fi))
	b.mark(n, s.field, func(n *node) { n.writeAllow = true })
}

// denyWrite adds a denyWrite entry: its existing targets, or the missing
// path it names.
func (b *builder) denyWrite(s spelled) error {
	if s.dotdot {
		return fmt.Errorf("%s %q: a \"..\" after a wildcard cannot be expanded; write the path without it: %w", s.field, s.entry, settings.ErrInvalid)
	}
	if !s.pattern {
		if !b.crosses(s, s.abs) {
			b.protect = append(b.protect, protect{abs: s.abs, why: s.field, entry: s.entry})
		}
		return nil
	}
	targets, err := b.targets(s, roleProtect)
	if err != nil {
		return err
	}
	for _, t := range targets {
		b.protect = append(b.protect, protect{abs: t.path, why: s.field, entry: s.entry})
	}
	return nil
}

// pinAbove pins dir and every writable directory above it up to the top of
// its write root.
func (b *builder) pinAbove(dir string) {
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if !b.t.readable(d) || !b.t.writable(d) {
			return
		}
		n := b.t.get(d, true)
		if !n.pin {
			b.mark(n, "pin", func(n *node) { n.pin = true })
		}
	}
}

// DropPlaceholders removes the mounts of placeholders that could not be
// created on the host: what srt cannot create, the command cannot either.
func (p *Plan) DropPlaceholders(paths []string) {
	drop := map[string]bool{}
	for _, x := range paths {
		drop[x] = true
	}
	mounts := p.Mounts[:0]
	for _, m := range p.Mounts {
		if !drop[m.Path] {
			mounts = append(mounts, m)
		}
	}
	p.Mounts = mounts
	phs := p.Placeholders[:0]
	for _, ph := range p.Placeholders {
		if !drop[ph.Path] {
			phs = append(phs, ph)
		}
	}
	p.Placeholders = phs
}

// writePaths are Landlock's write roots: the plan's, and /proc unless it
// is read-only (kernel.go), where the command's own /proc/<pid>/ files,
// which no rule can name before its processes exist, need it.
func (b *builder) writePaths() []string {
	out := append([]string(nil), b.p.WriteRoots...)
	if !b.p.ProcReadOnly {
		out = append(out, "/proc")
	}
	return out
}
