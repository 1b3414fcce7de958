package seatbelt

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/glob"
	"github.com/srt-sandbox/srt/internal/kernrand"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// Rule is one path a profile names: Anchor, a directory whose characters
// are a name (never a pattern), and Glob, the internal/glob pattern
// beneath it ("" for Anchor itself). A rule covers what it names and
// everything beneath it.
type Rule struct {
	Anchor string // absolute, clean
	Glob   string // relative, clean; "" for Anchor itself
	// Literal: the rule is the path Anchor alone (a file srt names, a
	// directory above a protected path), not what lies beneath it.
	Literal bool
	// Field names the setting the rule comes from, for messages and the
	// profile's comments.
	Field string
}

// Inputs is everything Generate needs, resolved. FromSettings builds it
// from the settings; tests may build it by hand.
type Inputs struct {
	// Shell and Command: the profile runs Shell -c Command.
	Shell, Command string
	// LogTag is every denial's message (see LogTag).
	LogTag string
	// SandboxExec is sandbox-exec's path (DefaultSandboxExec when "").
	SandboxExec string

	// FilesystemDisabled: no filesystem rules (filesystem.disabled):
	// everything may be read and written, but for srt's settings files.
	FilesystemDisabled bool
	// ReadDeny are hidden, ReadAllow re-open inside them (where the allow
	// is at or below the deny), StrongReadDeny are hidden with no
	// exception (credentials.files, masked files).
	ReadDeny, ReadAllow, StrongReadDeny []Rule
	// WriteAllow may be written (allowWrite, the default write paths,
	// TMPDIR); WriteDeny never (denyWrite, the always-protected names,
	// srt's settings files), even beneath a WriteAllow.
	WriteAllow, WriteDeny []Rule

	// HTTPPort and SOCKSPort are the proxies' ports on localhost, the
	// only network the command reaches (0: none).
	HTTPPort, SOCKSPort int
	AllowLocalBinding   bool
	AllowAllUnixSockets bool
	// AllowUnixSockets are socket paths, absolute: a socket, or a
	// directory (every socket beneath it).
	AllowUnixSockets []string
	// AllowMachLookup are Mach service names, "prefix*" for a prefix.
	AllowMachLookup              []string
	EnableWeakerNetworkIsolation bool
	AllowAppleEvents             bool
	AllowPty                     bool

	// Environ is the environment the command would inherit (KEY=value);
	// Env are the changes made to it, in order.
	Environ []string
	Env     []plan.EnvOp
	// Secrets are the values of Env that are secrets (the proxy
	// password): the profile never holds them, and callers keep them
	// out of what they log (Profile.ShellCommand has them).
	Secrets []string
	// Warnings say what a setting could not do on macOS.
	Warnings []string
}

// DefaultSandboxExec is where macOS has sandbox-exec.
const DefaultSandboxExec = "/usr/bin/sandbox-exec"

// DefaultTmpDir is the TMPDIR of a command when Env.TmpDir is "", as the
// reference has it; /tmp is a symlink to /private/tmp on macOS, and
// Seatbelt sees the resolved path, so both are writable.
const DefaultTmpDir = "/tmp/claude"

// Env is the command and the host it runs on, for FromSettings.
type Env struct {
	// Command is run as Shell -c Command (Shell: /bin/bash when "").
	Command, Shell string
	// CommandID is the attribution key (the command when ""): the log
	// tag and the proxy user carry it.
	CommandID string
	// Cwd and Home are absolute.
	Cwd, Home string
	// Environ is what the command would inherit, KEY=value, with the
	// masks of credentials.envVars already applied (the sentinels in
	// place of the values, as srt's sandbox package makes them on Linux
	// before it plans): FromSettings removes the denied variables, and
	// passes every other one through.
	Environ []string
	// HTTPPort and SOCKSPort are srt's proxies on localhost; 0 and 0: the
	// command reaches no network. ProxyUser and ProxyToken are their
	// credentials (no userinfo when ProxyToken is ""); HTTPExternal and
	// SOCKSExternal as in plan.Proxy.
	HTTPPort, SOCKSPort         int
	ProxyUser, ProxyToken       string
	HTTPExternal, SOCKSExternal bool
	// TmpDir is the command's TMPDIR, writable (DefaultTmpDir when "").
	TmpDir string
	// SettingsFiles are srt's settings files: never writable.
	SettingsFiles []string
	// MaskedFiles are files credentials.files masks: macOS cannot show a
	// masked copy, so they are hidden (absolute, symlinks resolved).
	MaskedFiles []string
	// CAKey is tlsTerminate's CA key, hidden whatever the rules say.
	CAKey string
	// Nonce is the log tag's random part ("": random).
	Nonce string
	// FS answers whether paths exist (fsview.OS{} when nil): an
	// allowWrite pattern grants the path it spells where that exists, as
	// on Linux, and the enclosing repository is found through it.
	FS fsview.FS
}

// FromSettings resolves cfg for the command and host env describes, through
// internal/plan's resolution (plan.Resolve), into Generate's Inputs.
func FromSettings(cfg *settings.Config, env Env) (Inputs, error) {
	if !filepath.IsAbs(env.Cwd) || !filepath.IsAbs(env.Home) {
		return Inputs{}, fmt.Errorf("seatbelt: the working directory (%q) and home (%q) must be absolute paths", env.Cwd, env.Home)
	}
	for _, d := range []struct{ what, path string }{{"the working directory", env.Cwd}, {"the home directory", env.Home}} {
		if _, err := sbplString(d.path); err != nil {
			return Inputs{}, fmt.Errorf("seatbelt: %s: %w", d.what, err)
		}
	}
	fsys := env.FS
	if fsys == nil {
		fsys = fsview.OS{}
	}
	shell := env.Shell
	if shell == "" {
		shell = "/bin/bash"
	}
	key := env.CommandID
	if key == "" {
		key = env.Command
	}
	tmp := env.TmpDir
	if tmp == "" {
		tmp = DefaultTmpDir
	}
	in := plan.Input{Config: cfg, FS: fsys, Cwd: filepath.Clean(env.Cwd), Home: filepath.Clean(env.Home), TmpDir: tmp, Env: env.Environ, Command: []string{shell, "-c", env.Command}, SettingsFiles: env.SettingsFiles}
	if env.HTTPPort != 0 || env.SOCKSPort != 0 {
		in.Proxy = &plan.Proxy{HTTPPort: env.HTTPPort, SOCKSPort: env.SOCKSPort, User: env.ProxyUser, Token: env.ProxyToken, HTTPExternal: env.HTTPExternal, SOCKSExternal: env.SOCKSExternal}
		if in.Proxy.User == "" {
			in.Proxy.User = srtlink.UserFor(key)
		}
		// ssh (and git over ssh) through the SOCKS proxy, with macOS's
		// nc, as the reference: nc speaks SOCKS5 without authentication,
		// so only to a proxy that wants no credentials.
		if env.SOCKSPort != 0 && (env.SOCKSExternal || env.ProxyToken == "") {
			in.Proxy.Connect = []string{"nc", "-X", "5", "-x", "localhost:" + strconv.Itoa(env.SOCKSPort)}
		}
	}
	r, err := plan.Resolve(in)
	if err != nil {
		return Inputs{}, err
	}
	nonce := env.Nonce
	if nonce == "" {
		nonce = randomNonce()
	}
	out := Inputs{
		Shell: shell, Command: env.Command, LogTag: LogTag(key, nonce),
		FilesystemDisabled: cfg.Filesystem.Disabled,
		HTTPPort:           env.HTTPPort, SOCKSPort: env.SOCKSPort,
		AllowLocalBinding:            cfg.Network.AllowLocalBinding,
		AllowAllUnixSockets:          cfg.Network.AllowAllUnixSockets,
		AllowMachLookup:              cfg.MacOS.AllowMachLookup,
		EnableWeakerNetworkIsolation: cfg.MacOS.EnableWeakerNetworkIsolation,
		AllowAppleEvents:             cfg.MacOS.AllowAppleEvents,
		AllowPty:                     cfg.MacOS.AllowPty,
		Environ:                      env.Environ,
		Env:                          r.Env,
		Warnings:                     r.Warnings,
	}
	if r.Secret != "" {
		out.Secrets = append(out.Secrets, r.Secret)
	}
	out.Env = append(out.Env, javaOptions(env.Environ, r.Env))
	for _, s := range cfg.Network.AllowUnixSockets {
		if rest, ok := strings.CutPrefix(s, "~/"); ok {
			s = filepath.Join(in.Home, rest)
		}
		out.AllowUnixSockets = append(out.AllowUnixSockets, filepath.Clean(s))
	}
	for _, f := range env.SettingsFiles {
		out.WriteDeny = append(out.WriteDeny, Rule{Anchor: filepath.Clean(f), Field: "srt settings file"})
	}
	if env.CAKey != "" {
		out.StrongReadDeny = append(out.StrongReadDeny, Rule{Anchor: filepath.Clean(env.CAKey), Field: "network.tlsTerminate.caKeyPath"})
	}
	// A masked file is hidden even with the filesystem rules off, as
	// masks apply then on Linux.
	for _, f := range env.MaskedFiles {
		out.StrongReadDeny = append(out.StrongReadDeny, Rule{Anchor: filepath.Clean(f), Field: "credentials.files (masked: macOS hides it)"})
	}
	if cfg.Filesystem.Disabled {
		out.StrongReadDeny = resolve(fsys, out.StrongReadDeny, true)
		out.WriteDeny = resolve(fsys, out.WriteDeny, true)
		return out, nil
	}
	rules := func(es []plan.Entry, deny bool) ([]Rule, error) {
		var rs []Rule
		for _, e := range es {
			if e.DotDot {
				if deny {
					return nil, fmt.Errorf("%s %q: a \"..\" after a wildcard cannot be compiled; write the path without it: %w", e.Field, e.Written, settings.ErrInvalid)
				}
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s %q has a \"..\" after a wildcard, which srt does not compile, so the entry allows nothing; write the path without it", e.Field, e.Written))
				continue
			}
			rs = append(rs, entryRules(e, deny, fsys)...)
		}
		return rs, nil
	}
	if out.ReadDeny, err = rules(r.DenyRead, true); err != nil {
		return Inputs{}, err
	}
	if out.ReadAllow, err = rules(r.AllowRead, false); err != nil {
		return Inputs{}, err
	}
	strong, err := rules(r.CredentialDenies, true)
	if err != nil {
		return Inputs{}, err
	}
	out.StrongReadDeny = append(strong, out.StrongReadDeny...)
	deny, err := rules(r.DenyWrite, true)
	if err != nil {
		return Inputs{}, err
	}
	out.WriteDeny = append(deny, out.WriteDeny...)
	for _, e := range r.AllowWrite {
		if e.Pattern {
			// Writes are granted to paths, as on Linux: a pattern grants
			// the path it spells where that exists.
			if _, err := fsys.Lstat(e.Abs); e.DotDot || err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("%s %q is a pattern; srt grants writes only to paths, so this entry grants nothing", e.Field, e.Written))
				continue
			}
		}
		out.WriteAllow = append(out.WriteAllow, Rule{Anchor: e.Abs, Field: e.Field})
	}
	out.WriteAllow = append(out.WriteAllow, defaultWrites(in.Home, tmp, out.ReadDeny, out.ReadAllow)...)
	out.WriteDeny = append(out.WriteDeny, mandatory(r, in.Cwd, in.Home, fsys, cfg.Filesystem.AllowGitConfig)...)
	// Seatbelt matches the path the kernel resolved (/tmp/x is
	// /private/tmp/x): a deny holds as spelled and as resolved, an allow
	// grants the resolved path.
	out.ReadDeny = resolve(fsys, out.ReadDeny, true)
	out.StrongReadDeny = resolve(fsys, out.StrongReadDeny, true)
	out.WriteDeny = resolve(fsys, out.WriteDeny, true)
	out.ReadAllow = resolve(fsys, out.ReadAllow, false)
	out.WriteAllow = resolve(fsys, out.WriteAllow, false)
	for i, s := range out.AllowUnixSockets {
		out.AllowUnixSockets[i] = resolvedPath(fsys, s)
	}
	return out, nil
}

// resolve makes the rules' anchors resolved paths (their existing part's
// symlinks resolved); for denies, the spelled rule stays beside the
// resolved one. /dev's entries are kept as spelled, as the reference's
// profile has them.
func resolve(fsys fsview.FS, rs []Rule, deny bool) []Rule {
	var out []Rule
	for _, r := range rs {
		real := r
		real.Anchor = resolvedPath(fsys, r.Anchor)
		if deny || real.Anchor == r.Anchor {
			out = append(out, r)
		}
		if real.Anchor != r.Anchor {
			out = append(out, real)
		}
	}
	return out
}

// resolvedPath is p with the symlinks of its existing part resolved (p
// when that fails, and for /dev's entries).
func resolvedPath(fsys fsview.FS, p string) string {
	if fsview.IsWithin(p, "/dev") {
		return p
	}
	existing, missing, err := fsview.ResolveExisting(fsys, p)
	if err != nil {
		return p
	}
	return filepath.Join(existing, missing)
}

// entryRules are the rules of an entry: its pattern beneath its base, and
// for a deny also the readings a name on disk gives it, as on Linux: a
// directory "vault/[v1.2]" makes "vault/[v1.2]/*" also the pattern "*"
// beneath that very directory, and an entry whose whole path exists as
// spelled also that path.
func entryRules(e plan.Entry, deny bool, fsys fsview.FS) []Rule {
	if !e.Pattern {
		return []Rule{{Anchor: e.Abs, Field: e.Field}}
	}
	// The anchor takes the entry's leading components that hold no
	// pattern: the regex then starts with the longest literal prefix.
	parts := strings.Split(e.Rest, "/")
	i := 0
	for i < len(parts)-1 && !glob.IsPattern(parts[i]) {
		i++
	}
	out := []Rule{{Anchor: filepath.Join(e.Base, strings.Join(parts[:i], "/")), Glob: strings.Join(parts[i:], "/"), Field: e.Field}}
	if !deny {
		return out
	}
	// The components from the first pattern on that exist as spelled are
	// names: beneath the deepest such directory, the rest is a pattern
	// again where it holds one.
	for j := i; j < len(parts); j++ {
		anchor := filepath.Join(e.Base, strings.Join(parts[:j+1], "/"))
		if _, err := fsys.Lstat(anchor); err != nil {
			break
		}
		rest := strings.Join(parts[j+1:], "/")
		switch {
		case rest == "":
			out = append(out, Rule{Anchor: anchor, Field: e.Field})
		case glob.IsPattern(rest) && glob.IsPattern(parts[j]):
			k := j + 1
			for k < len(parts)-1 && !glob.IsPattern(parts[k]) {
				k++
			}
			out = append(out, Rule{Anchor: filepath.Join(anchor, strings.Join(parts[j+1:k], "/")), Glob: strings.Join(parts[k:], "/"), Field: e.Field})
		}
	}
	return out
}

// defaultWrites are the paths every command may write (the reference's,
// less ~/.claude/debug, which srt protects with the whole of ~/.claude):
// the terminal devices, TMPDIR, and ~/.npm/_logs unless a read deny hides
// it.
func defaultWrites(home, tmp string, readDeny, readAllow []Rule) []Rule {
	var out []Rule
	for _, d := range []string{"/dev/stdout", "/dev/stderr", "/dev/null", "/dev/tty", "/dev/dtracehelper", "/dev/autofs_nowait"} {
		out = append(out, Rule{Anchor: d, Literal: true, Field: "default write path"})
	}
	for _, t := range privateAlias(filepath.Clean(tmp)) {
		out = append(out, Rule{Anchor: t, Field: "TMPDIR"})
	}
	npm := filepath.Join(home, ".npm/_logs")
	if !hiddenLiterally(npm, readDeny, readAllow) {
		out = append(out, Rule{Anchor: npm, Field: "default write path"})
	}
	return out
}

// privateAlias lists p and, for a path in /tmp, /var or /etc (symlinks to
// /private/… on macOS), its /private form: Seatbelt matches resolved paths.
func privateAlias(p string) []string {
	for _, top := range []string{"/tmp", "/var", "/etc"} {
		if fsview.IsWithin(p, top) {
			return []string{p, "/private" + p}
		}
	}
	return []string{p}
}

// hiddenLiterally says whether a read deny path (no pattern) at or above
// p hides it with no deeper allow re-opening it.
func hiddenLiterally(p string, deny, allow []Rule) bool {
	depth := -1
	for _, r := range deny {
		if r.Glob == "" && fsview.IsWithin(p, r.Anchor) && len(r.Anchor) > depth {
			depth = len(r.Anchor)
		}
	}
	if depth < 0 {
		return false
	}
	for _, r := range allow {
		if r.Glob == "" && fsview.IsWithin(p, r.Anchor) && len(r.Anchor) >= depth {
			return false
		}
	}
	return true
}

// mandatory are the always-protected paths: the start-up files of home,
// the names of plan's list in the working directory and at any depth
// beneath it (patterns: files made later are covered), the git hooks and
// config of the working directory's repositories and of the repository
// around it.
//
// macOS's volumes are case-insensitive by default: ".VSCODE/tasks.json",
// created where ".vscode" does not exist yet, is what VS Code then opens
// as ".vscode/tasks.json", but Seatbelt compares the name as spelled. So
// every protected name is also denied in any case (caseless), as a
// pattern.
func mandatory(r *plan.Resolved, cwd, home string, fsys fsview.FS, allowGitConfig bool) []Rule {
	var out []Rule
	for _, p := range r.HomeStartup {
		out = append(out, Rule{Anchor: p.Path, Field: "mandatory (home)"})
		if rel, err := filepath.Rel(home, p.Path); err == nil && filepath.IsLocal(rel) {
			if g, ok := caseless(rel); ok {
				out = append(out, Rule{Anchor: home, Glob: g, Field: "mandatory (home, any case)"})
			}
		}
	}
	if real, err := fsview.Realpath(fsys, cwd); err == nil {
		cwd = real
	}
	names := []string{}
	for _, p := range r.CwdStartup {
		names = append(names, p.Path)
	}
	names = append(names, ".git/hooks")
	if !allowGitConfig {
		names = append(names, ".git/config")
	}
	for _, n := range names {
		g, ok := caseless(n)
		if !ok {
			g = n
		}
		out = append(out, Rule{Anchor: filepath.Join(cwd, n), Field: "mandatory"}, Rule{Anchor: cwd, Glob: "**/" + g, Field: "mandatory"})
	}
	// The repository around the working directory.
	for d := filepath.Dir(cwd); cwd != "/"; d = filepath.Dir(d) {
		if fi, err := fsys.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.IsDir() {
				out = append(out, Rule{Anchor: filepath.Join(d, ".git/hooks"), Field: "mandatory (enclosing repository)"})
				if !allowGitConfig {
					out = append(out, Rule{Anchor: filepath.Join(d, ".git/config"), Field: "mandatory (enclosing repository)"})
				}
			} else {
				out = append(out, Rule{Anchor: filepath.Join(d, ".git"), Field: "mandatory (enclosing repository)"})
			}
			break
		}
		if d == "/" {
			break
		}
	}
	return out
}

// caseless is the pattern of rel (a relative path of plain ASCII names)
// in any case: each letter a set of its two cases (".vscode" is
// ".[vV][sS][cC][oO][dD][eE]"). It is false for a path holding a
// character a pattern would read (which no protected name does) or
// non-ASCII (whose folding is the volume's, not ASCII's).
func caseless(rel string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		switch {
		case c >= 0x80 || strings.IndexByte(`*?[]{}\!`, c) >= 0:
			return "", false
		case c >= 'a' && c <= 'z':
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		case c >= 'A' && c <= 'Z':
			b.WriteString("[" + string(c-'A'+'a') + string(c) + "]")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// javaOptions appends -Djava.net.preferIPv4Stack=true to the inherited
// JAVA_TOOL_OPTIONS (unless an earlier change removed it): the JVM's
// IPv6 sockets are refused by the profile's localhost rules. Last, as the
// reference has it: the JVM takes the last of repeated -D options, so an
// inherited "=false" does not undo it.
func javaOptions(environ []string, ops []plan.EnvOp) plan.EnvOp {
	const opt = "-Djava.net.preferIPv4Stack=true"
	v, ok := "", false
	for _, kv := range environ {
		if rest, found := strings.CutPrefix(kv, "JAVA_TOOL_OPTIONS="); found {
			v, ok = rest, true
		}
	}
	for _, op := range ops {
		if op.Name == "JAVA_TOOL_OPTIONS" {
			v, ok = op.Value, !op.Unset
		}
	}
	if ok && v != "" {
		return plan.EnvOp{Name: "JAVA_TOOL_OPTIONS", Value: v + " " + opt}
	}
	return plan.EnvOp{Name: "JAVA_TOOL_OPTIONS", Value: opt}
}

// LogTag is the message every denial of the command's profile carries:
// the reference's CMD64_<label>_END__<nonce>_SBX, where label is the
// attribution key's label (srtlink.KeyLabel) and nonce tells runs apart.
func LogTag(key, nonce string) string {
	return "CMD64_" + srtlink.KeyLabel(key) + "_END__" + nonce + "_SBX"
}

// randomNonce is nine random characters of [a-z0-9].
func randomNonce() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [9]byte
	kernrand.Fill(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
