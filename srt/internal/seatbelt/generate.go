package seatbelt

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/srt-sandbox/srt/internal/glob"
	"github.com/srt-sandbox/srt/internal/plan"
)

// Profile is a generated sandbox: run Argv with environment Env.
type Profile struct {
	// SBPL is the profile text.
	SBPL string
	// LogTag is the message of every denial (Inputs.LogTag).
	LogTag string
	// Argv is sandbox-exec -p SBPL Shell -c Command.
	Argv []string
	// Env is the command's whole environment, KEY=value: Inputs.Environ
	// with Inputs.Env applied.
	Env []string
	// Unset and Set are the changes Env has from Inputs.Environ, in the
	// order applied (ShellCommand writes them as env's arguments).
	Unset []string
	Set   []plan.EnvOp
	// Warnings say what a setting could not do on macOS.
	Warnings []string
}

// Generate writes the profile of in. Its errors name the setting whose
// value a profile cannot hold.
func Generate(in Inputs) (*Profile, error) {
	if in.Shell == "" {
		return nil, fmt.Errorf("seatbelt: no shell to run the command with")
	}
	w := &writer{}
	tag := w.str("the log tag", in.LogTag)
	w.line("(version 1)")
	w.line("(deny default (with message %s))", tag)
	w.line("")
	w.base()
	w.mach(in)
	w.network(in)
	w.files(in, tag)
	if in.AllowPty {
		w.line("")
		w.line("; Pseudo-terminals (allowPty)")
		w.line("(allow pseudo-tty)")
		w.line("(allow file-ioctl (literal \"/dev/ptmx\") (regex #\"^/dev/ttys\"))")
		w.line("(allow file-read* file-write* (literal \"/dev/ptmx\") (regex #\"^/dev/ttys\"))")
	}
	if w.err != nil {
		return nil, fmt.Errorf("seatbelt: %w", w.err)
	}
	exe := in.SandboxExec
	if exe == "" {
		exe = DefaultSandboxExec
	}
	p := &Profile{SBPL: w.b.String(), LogTag: in.LogTag, Warnings: in.Warnings}
	p.Argv = []string{exe, "-p", p.SBPL, in.Shell, "-c", in.Command}
	p.Env, p.Unset, p.Set = applyEnv(in.Environ, in.Env)
	return p, nil
}

// mach writes the Mach services the settings add.
func (w *writer) mach(in Inputs) {
	if in.EnableWeakerNetworkIsolation {
		w.line("; enableWeakerNetworkIsolation: trustd verifies TLS certificates (Go, Security.framework)")
		w.line("(allow mach-lookup (global-name \"com.apple.trustd.agent\"))")
	}
	if in.AllowAppleEvents {
		w.line("; allowAppleEvents: open and osascript")
		w.line("(allow appleevent-send)")
		w.line("(allow lsopen)")
		w.line("(allow mach-lookup (global-name \"com.apple.coreservices.appleevents\"))")
		w.line("(allow mach-lookup (global-name \"com.apple.CoreServices.coreservicesd\"))")
		w.line("(allow mach-lookup (global-name \"com.apple.coreservices.quarantine-resolver\"))")
	}
	for i, s := range in.AllowMachLookup {
		field := fmt.Sprintf("network.allowMachLookup.%d", i)
		if prefix, ok := strings.CutSuffix(s, "*"); ok {
			w.line("(allow mach-lookup (global-name-prefix %s))", w.str(field, prefix))
		} else {
			w.line("(allow mach-lookup (global-name %s))", w.str(field, s))
		}
	}
}

// network writes what the command may reach: the proxies' ports, and what
// allowLocalBinding and the Unix socket settings open.
func (w *writer) network(in Inputs) {
	w.line("")
	w.line("; Network: only the proxies on localhost")
	if in.AllowLocalBinding {
		w.line("(allow network-bind (local ip \"*:*\"))")
		w.line("(allow network-inbound (local ip \"*:*\"))")
		w.line("(allow network-outbound (remote ip \"localhost:*\"))")
	}
	if in.AllowAllUnixSockets {
		w.line("(allow system-socket (socket-domain AF_UNIX))")
		w.line("(allow network-bind (local unix-socket (path-regex #\"^/\")))")
		w.line("(allow network-outbound (remote unix-socket (path-regex #\"^/\")))")
	} else if len(in.AllowUnixSockets) > 0 {
		w.line("(allow system-socket (socket-domain AF_UNIX))")
		for i, s := range in.AllowUnixSockets {
			q := w.str(fmt.Sprintf("network.allowUnixSockets.%d", i), s)
			w.line("(allow network-bind (local unix-socket (subpath %s)))", q)
			w.line("(allow network-outbound (remote unix-socket (subpath %s)))", q)
		}
	}
	for _, port := range []int{in.HTTPPort, in.SOCKSPort} {
		if port <= 0 || port > 65535 {
			continue
		}
		addr := "\"localhost:" + strconv.Itoa(port) + "\""
		w.line("(allow network-bind (local ip %s))", addr)
		w.line("(allow network-inbound (local ip %s))", addr)
		w.line("(allow network-outbound (remote ip %s))", addr)
	}
}

// filter writes the SBPL filter of a rule.
func (w *writer) filter(r Rule) string {
	if r.Glob == "" {
		if r.Literal {
			return "(literal " + w.str(r.Field, r.Anchor) + ")"
		}
		return "(subpath " + w.str(r.Field, r.Anchor) + ")"
	}
	p, err := glob.CompileWithLiteralPrefix(r.Anchor, r.Glob)
	var re string
	if err == nil {
		re, err = p.Regex(!r.Literal)
	}
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("%s: %w", r.Field, err)
		}
		return ""
	}
	return "(regex " + w.str(r.Field, re) + ")"
}

// rule writes one rule over filters, every denial tagged.
func (w *writer) rule(action, ops string, filters []string, tag string) {
	if len(filters) == 0 {
		return
	}
	w.line("(%s %s", action, ops)
	for _, f := range filters {
		w.line("  %s", f)
	}
	w.line("  (with message %s))", tag)
}

// depth is how many components a rule's literal part has: of two rules
// that both cover a path, the deeper is the more specific.
func depth(r Rule) int {
	if r.Anchor == "/" {
		return 0
	}
	return strings.Count(r.Anchor, "/")
}

// files writes the filesystem rules. Seatbelt applies the last rule that
// matches, so rules are written from the least to the most specific:
//
//   - reads: everything, then denyRead and allowRead (and allowWrite)
//     paths from the shallowest to the deepest (a deny at the same path as an allow
//     first, so the allow wins, as on Linux), then denyRead patterns
//     (a pattern names paths below its literal part: more specific than
//     an allow of that part), then the denies no allow re-opens;
//   - writes: the write roots; then, in the order of the reads, a hidden
//     path cannot be written (nor its contents moved out), but where an
//     allowRead re-opens a part of a write root; then the write denies;
//   - renames and removals (file-write-unlink, file-write-create): a
//     protected or hidden path itself, and every directory above it,
//     cannot be renamed or removed, as Linux's pins forbid: the
//     protection cannot be moved away.
func (w *writer) files(in Inputs, tag string) {
	w.line("")
	w.line("; Files")
	if in.FilesystemDisabled {
		w.line("(allow file-read*)")
		w.line("(allow file-write*)")
		w.rule("deny", "file-write*", w.filters(in.WriteDeny), tag)
		w.rule("deny", "file-read*", w.filters(in.StrongReadDeny), tag)
		w.rule("deny", moves, w.pins(in.WriteDeny, in.StrongReadDeny), tag)
		return
	}
	w.line("(allow file-read*)")
	type item struct {
		r    Rule
		deny bool
	}
	var lit []item
	var globs []Rule
	for _, r := range in.ReadDeny {
		if r.Glob != "" {
			globs = append(globs, r)
		} else {
			lit = append(lit, item{r, true})
		}
	}
	// Reads are allowed by allowRead and by allowWrite alike (as on
	// Linux: what may be written may be read); "/" denied is every
	// top-level entry but the kernel's own, as on Linux: /dev stays, and
	// so does the listing of "/".
	for _, r := range append(append([]Rule(nil), in.ReadAllow...), in.WriteAllow...) {
		lit = append(lit, item{r, false})
	}
	for _, r := range in.ReadDeny {
		if r.Anchor == "/" && r.Glob == "" {
			// The root directory itself stays listable, as on Linux (where
			// each top-level entry is hidden, not "/"), and as the reference.
			lit = append(lit, item{Rule{Anchor: "/dev", Field: r.Field + " (but /dev)"}, false},
				item{Rule{Anchor: "/", Literal: true, Field: r.Field + " (but / itself)"}, false})
			break
		}
	}
	sort.SliceStable(lit, func(i, j int) bool {
		di, dj := depth(lit[i].r), depth(lit[j].r)
		if di != dj {
			return di < dj
		}
		return lit[i].deny && !lit[j].deny
	})
	// runs calls f for each run of items of the same action.
	// An allow before the first deny repeats what everything allowed
	// says already: it is left out.
	runs := func(f func(deny bool, rs []Rule)) {
		denied := false
		for i := 0; i < len(lit); {
			j := i
			var rs []Rule
			for ; j < len(lit) && lit[j].deny == lit[i].deny; j++ {
				rs = append(rs, lit[j].r)
			}
			if denied = denied || lit[i].deny; denied {
				f(lit[i].deny, rs)
			}
			i = j
		}
	}
	runs(func(deny bool, rs []Rule) {
		if deny {
			w.rule("deny", "file-read*", w.filters(rs), tag)
		} else {
			w.rule("allow", "file-read*", w.filters(rs), tag)
		}
	})
	w.rule("deny", "file-read*", w.filters(globs), tag)
	w.rule("deny", "file-read*", w.filters(in.StrongReadDeny), tag)
	// A hidden directory's entry itself can be looked up (stat, realpath
	// of a path through it); its contents cannot be read.
	w.line("(allow file-read-metadata (vnode-type DIRECTORY))")

	w.line("")
	roots := w.filters(in.WriteAllow)
	w.rule("allow", "file-write*", roots, tag)
	// A hidden path is not written either (on Linux it is an empty
	// directory, or /dev/null: the host's file is out of reach), but
	// where an allowRead re-opens a writable part, in the order of the
	// reads.
	runs(func(deny bool, rs []Rule) {
		if deny {
			w.rule("deny", "file-write*", w.filters(rs), tag)
			return
		}
		if len(roots) == 0 {
			return
		}
		// The listing of "/" is for reading only.
		rs = slices.DeleteFunc(slices.Clone(rs), func(r Rule) bool { return r.Anchor == "/" && r.Literal })
		var fs []string
		for _, f := range w.filters(rs) {
			if slices.Contains(roots, f) {
				fs = append(fs, f) // a write root itself
			} else {
				fs = append(fs, "(require-all "+f+" (require-any "+strings.Join(roots, " ")+"))")
			}
		}
		w.rule("allow", "file-write*", fs, tag)
	})
	w.rule("deny", "file-write*", w.filters(append(append([]Rule(nil), globs...), in.StrongReadDeny...)), tag)
	w.rule("deny", "file-write*", w.filters(in.WriteDeny), tag)
	hidden := append(append([]Rule(nil), in.ReadDeny...), in.StrongReadDeny...)
	w.rule("deny", moves, w.pins(in.WriteDeny, hidden), tag)
}

// moves are the operations of a rename or removal.
const moves = "file-write-unlink file-write-create"

// pins are the filters a rename or removal may not touch: the protected
// paths (with what is beneath them), the hidden paths themselves, and
// every directory above either.
func (w *writer) pins(protected, hidden []Rule) []string {
	out := w.filters(protected)
	for _, r := range hidden {
		r.Literal = true
		out = append(out, w.filter(r))
	}
	out = append(out, w.ancestors(append(append([]Rule(nil), protected...), hidden...))...)
	return dedupe(out)
}

func (w *writer) filters(rs []Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, w.filter(r))
	}
	return dedupe(out)
}

// ancestors are literal filters of the directories above the rules'
// literal parts, "/" excluded.
func (w *writer) ancestors(rs []Rule) []string {
	seen := map[string]bool{}
	var dirs []string
	for _, r := range rs {
		d := r.Anchor
		if r.Glob == "" {
			d = filepath.Dir(d)
		}
		for ; d != "/" && d != "." && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		out = append(out, "(literal "+w.str("a directory above a protected path", d)+")")
	}
	return out
}

func dedupe(fs []string) []string {
	seen := map[string]bool{}
	out := fs[:0]
	for _, f := range fs {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// applyEnv applies ops to environ: the command's environment, and the
// variables removed and set, for env's arguments.
func applyEnv(environ []string, ops []plan.EnvOp) (env, unset []string, set []plan.EnvOp) {
	env = append([]string(nil), environ...)
	for _, op := range ops {
		kept := env[:0]
		for _, kv := range env {
			if name, _, _ := strings.Cut(kv, "="); name != op.Name {
				kept = append(kept, kv)
			}
		}
		env = kept
		if op.Unset {
			unset = append(unset, op.Name)
			continue
		}
		env = append(env, op.Name+"="+op.Value)
		set = append(set, op)
	}
	return env, unset, set
}

// ShellCommand is the sandboxed command as one shell command line, in the
// reference's shape: env -u NAME… NAME=value… sandbox-exec -p '<profile>'
// <shell> -c '<command>'. It carries the environment's values, the proxy
// password among them: it is for tests and debugging, not for argv.
func (p *Profile) ShellCommand() string {
	var b strings.Builder
	b.WriteString("env")
	for _, n := range p.Unset {
		b.WriteString(" -u " + shellQuote(n))
	}
	for _, op := range p.Set {
		b.WriteString(" " + shellQuote(op.Name+"="+op.Value))
	}
	for _, a := range p.Argv {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell, leaving words of safe characters
// as they are.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
