package plan

import (
	"fmt"

	"github.com/srt-sandbox/srt/settings"
)

// Entry is one entry of a filesystem list as the settings' rules are
// resolved for every platform: "~" expanded, a relative path joined to the
// working directory, "//", "/./" and ".." folded, a trailing "/" or "/**"
// dropped from a path (see spelled). Build turns entries into mounts (Linux);
// the macOS profile generator (internal/seatbelt) into Seatbelt filters.
type Entry struct {
	// Field is the dotted settings path ("filesystem.denyRead.0"), for
	// messages; Written is the entry as the file has it.
	Field, Written string
	// Base is the directory the entry is written in — the working
	// directory, home, or "/" — whose characters are a name, never a
	// pattern; Rest is what the user wrote beneath it, "" for Base itself.
	// Abs is the two joined.
	Base, Rest, Abs string
	// Pattern: Rest holds a `*`, `?` or valid `[set]` (internal/glob's
	// grammar); never for a literal entry.
	Pattern bool
	// DotDot: a ".." follows a wildcard ("proj/*/../keep"); Rest and Abs
	// keep it, and the entry cannot be compiled.
	DotDot bool
}

// Lists are the filesystem lists of the settings, resolved: the one
// reading of the settings both platforms start from.
type Lists struct {
	DenyRead, AllowRead, AllowWrite, DenyWrite []Entry
	// CredentialDenies are the credentials.files entries in mode "deny":
	// read denies no allowRead re-opens.
	CredentialDenies []Entry
}

// entry exports a spelled entry.
func (s spelled) export() Entry {
	return Entry{Field: s.field, Written: s.entry, Base: s.base, Rest: s.rest, Abs: s.abs, Pattern: s.pattern, DotDot: s.dotdot}
}

// lists spells the filesystem lists, in the order rules applies them.
func (b *builder) lists() (allowWrite, denyWrite, denyRead, credDeny, allowRead []spelled) {
	fsCfg := b.in.Config.Filesystem
	each := func(name string, es []settings.PathEntry) []spelled {
		var out []spelled
		for i, e := range es {
			out = append(out, b.spell(fmt.Sprintf("filesystem.%s.%d", name, i), e))
		}
		return out
	}
	allowWrite = each("allowWrite", fsCfg.AllowWrite)
	denyWrite = each("denyWrite", fsCfg.DenyWrite)
	denyRead = each("denyRead", fsCfg.DenyRead)
	for i, f := range b.in.Config.Credentials.Files {
		if f.Mode == "deny" {
			credDeny = append(credDeny, b.spell(fmt.Sprintf("credentials.files.%d.path", i), settings.PathEntry{Path: f.Path}))
		}
	}
	allowRead = each("allowRead", fsCfg.AllowRead)
	return
}

// Resolved is what the settings say for a command, before any platform
// enforces it: the filesystem lists (Lists), the always-protected names
// (HomeStartup, CwdStartup) and the environment (Env, as Build computes
// it). Resolve reads no filesystem.
type Resolved struct {
	Lists
	// HomeStartup are the start-up files and directories in $HOME that
	// are always write-protected (absolute; Dir for a directory).
	HomeStartup []Protected
	// CwdStartup are the names always write-protected in the working
	// directory (relative to it; Linux also protects them where they
	// exist below it).
	CwdStartup []Protected
	// Env are the variables set and removed inside the sandbox.
	Env []EnvOp
	// Secret is the proxy password Env carries ("" when none).
	Secret string
	// Warnings and Notes are as Plan's.
	Warnings, Notes []string
}

// Protected is an always-protected path, and why.
type Protected struct {
	Path string
	Dir  bool
	Why  string
}

// Resolve resolves the settings of in against its working directory, home,
// environment and proxy, without looking at the filesystem (in.FS is not
// used): the resolution Build starts from too (builder.lists, builder.env).
func Resolve(in Input) (*Resolved, error) {
	b := &builder{in: in, limits: in.Limits.orDefaults(), warned: map[string]bool{}, hidden: map[string]bool{}, sealed: map[string]bool{}, entries: map[string]string{}, missing: map[string][]string{}, p: &Plan{Command: in.Command}}
	r := &Resolved{}
	exp := func(ss []spelled) []Entry {
		var out []Entry
		for _, s := range ss {
			out = append(out, s.export())
		}
		return out
	}
	aw, dw, dr, cd, ar := b.lists()
	r.AllowWrite, r.DenyWrite, r.DenyRead, r.CredentialDenies, r.AllowRead = exp(aw), exp(dw), exp(dr), exp(cd), exp(ar)
	for _, s := range homeStartup {
		r.HomeStartup = append(r.HomeStartup, Protected{Path: s.protect(in.Home).abs, Dir: s.dir, Why: s.why})
	}
	for _, s := range cwdProtects {
		r.CwdStartup = append(r.CwdStartup, Protected{Path: s.rel, Dir: s.dir, Why: s.why})
	}
	b.env()
	r.Env, r.Secret = b.p.Env, b.p.secret
	r.Warnings, r.Notes = b.p.Warnings, b.p.Notes
	return r, nil
}
