package seatbelt

// Hostile review of the macOS profile generator (review/macos). These
// tests read the profiles with a reader of their own (tsRead, after
// TinyScheme's, the reader SBPL is built on) rather than the package's
// parseSBPL, and attack the settings values, the rules' semantics and the
// log stream parser.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

// tsDatum is a datum of tsRead: an atom, a string or a list.
type tsDatum struct {
	kind byte // 'a' atom, 's' string, 'l' list
	text string
	list []tsDatum
}

// tsRead reads s as TinyScheme's reader does: ';' comments, "#|…|#"
// block comments refused (SBPL's reader has none; srt must never write
// one), strings with every escape TinyScheme knows (\n \t \r \" \\, \xHH,
// octal \ooo, and any other \c as c), #"raw strings" up to the next '"',
// and atoms up to a delimiter. It is independent of parseSBPL/readString
// on purpose: a value that the two readers read differently is a value
// whose meaning depends on the reader.
func tsRead(s string) ([]tsDatum, error) {
	var stack [][]tsDatum
	var cur []tsDatum
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '(':
			stack = append(stack, cur)
			cur = nil
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("stray ) at %d", i)
			}
			l := tsDatum{kind: 'l', list: cur}
			cur = append(stack[len(stack)-1], l)
			stack = stack[:len(stack)-1]
			i++
		case strings.HasPrefix(s[i:], "#|"):
			return nil, fmt.Errorf("a block comment at %d", i)
		case strings.HasPrefix(s[i:], `#"`):
			end := strings.IndexByte(s[i+2:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated #\" at %d", i)
			}
			cur = append(cur, tsDatum{kind: 's', text: s[i+2 : i+2+end]})
			i += end + 3
		case c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("unterminated string at %d", i)
				}
				if s[j] == '"' {
					j++
					break
				}
				if s[j] != '\\' {
					b.WriteByte(s[j])
					j++
					continue
				}
				j++
				if j >= len(s) {
					return nil, fmt.Errorf("backslash at the end")
				}
				switch e := s[j]; {
				case e == 'n':
					b.WriteByte('\n')
					j++
				case e == 't':
					b.WriteByte('\t')
					j++
				case e == 'r':
					b.WriteByte('\r')
					j++
				case e == 'x' || e == 'X':
					k := j + 1
					for k < len(s) && k < j+3 && strings.IndexByte("0123456789abcdefABCDEF", s[k]) >= 0 {
						k++
					}
					v, _ := strconv.ParseUint(s[j+1:k], 16, 8)
					b.WriteByte(byte(v))
					j = k
				case e >= '0' && e <= '7':
					k := j
					for k < len(s) && k < j+3 && s[k] >= '0' && s[k] <= '7' {
						k++
					}
					v, _ := strconv.ParseUint(s[j:k], 8, 8)
					b.WriteByte(byte(v))
					j = k
				default:
					b.WriteByte(e)
					j++
				}
			}
			cur = append(cur, tsDatum{kind: 's', text: b.String()})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r\f()\";", rune(s[j])) {
				j++
			}
			cur = append(cur, tsDatum{kind: 'a', text: s[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed (", len(stack))
	}
	return cur, nil
}

// tsSkeleton is a profile's structure with every string replaced by "S":
// two profiles with the same skeleton have the same rules, whatever their
// strings.
func tsSkeleton(ds []tsDatum) string {
	var b strings.Builder
	var walk func(ds []tsDatum)
	walk = func(ds []tsDatum) {
		for _, d := range ds {
			switch d.kind {
			case 'a':
				b.WriteString(d.text + " ")
			case 's':
				b.WriteString("S ")
			case 'l':
				b.WriteString("(")
				walk(d.list)
				b.WriteString(") ")
			}
		}
	}
	walk(ds)
	return b.String()
}

func tsStrings(ds []tsDatum, out map[string]bool) {
	for _, d := range ds {
		if d.kind == 's' {
			out[d.text] = true
		}
		tsStrings(d.list, out)
	}
}

// hostileValues are the values every setting is attacked with.
var hostileValues = []string{
	`a"b`, `a\b`, `a\"b`, `a\\`, `\`, `"`, `")(allow default)(";`, `#"`, `#"x"`, `#|`, `|#`,
	`a;b`, `; (allow file-write*)`, `a\nb`, `a\x41b`, `a\101b`, `\t`, `a)b`, `a(b`,
	"é", "日本", "\u2028", "\u200b", "\ufeff", "a\u00a0b",
	"a.b", "a+", "(x)", "[x]", "a|b", "^", "$", "{1}", "a?", "a*", "**", "[!x]", "[]]",
}

// TestReviewInjectionIndependentReader writes each hostile value into each
// setting that reaches the profile and reads the profile with tsRead: the
// profile must have the skeleton of a profile with a plain value (no rule
// added, none ended), and hold the value as one string. Values that
// cannot be named must be refused with the setting's name.
func TestReviewInjectionIndependentReader(t *testing.T) {
	type field struct {
		name string
		set  func(c *settings.Config, e *Env, v string)
		want func(v string) string // the string the profile must hold
	}
	lit := func(v string) settings.PathEntry { return settings.PathEntry{Path: "/x/" + v, Literal: true} }
	clean := func(v string) string { return filepath.Clean("/x/" + v) }
	fields := []field{
		{"denyRead", func(c *settings.Config, _ *Env, v string) { c.Filesystem.DenyRead = []settings.PathEntry{lit(v)} }, clean},
		{"allowRead", func(c *settings.Config, _ *Env, v string) {
			c.Filesystem.DenyRead = []settings.PathEntry{{Path: "/"}}
			c.Filesystem.AllowRead = []settings.PathEntry{lit(v)}
		}, clean},
		{"allowWrite", func(c *settings.Config, _ *Env, v string) { c.Filesystem.AllowWrite = []settings.PathEntry{lit(v)} }, clean},
		{"denyWrite", func(c *settings.Config, _ *Env, v string) { c.Filesystem.DenyWrite = []settings.PathEntry{lit(v)} }, clean},
		{"allowUnixSockets", func(c *settings.Config, _ *Env, v string) { c.Network.AllowUnixSockets = []string{"/x/" + v} }, clean},
		{"allowMachLookup", func(c *settings.Config, _ *Env, v string) { c.MacOS.AllowMachLookup = []string{"com.x." + v} },
			func(v string) string { return strings.TrimSuffix("com.x."+v, "*") }},
		{"cwd", func(_ *settings.Config, e *Env, v string) { e.Cwd = filepath.Clean("/w/" + v) },
			func(v string) string { return filepath.Join(filepath.Clean("/w/"+v), ".bashrc") }},
		{"home", func(_ *settings.Config, e *Env, v string) { e.Home = filepath.Clean("/h/" + v) },
			func(v string) string { return filepath.Join(filepath.Clean("/h/"+v), ".bashrc") }},
		{"settings file", func(_ *settings.Config, e *Env, v string) { e.SettingsFiles = []string{"/s/" + v} },
			func(v string) string { return filepath.Clean("/s/" + v) }},
		{"masked file", func(_ *settings.Config, e *Env, v string) { e.MaskedFiles = []string{"/m/" + v} },
			func(v string) string { return filepath.Clean("/m/" + v) }},
		{"TMPDIR", func(_ *settings.Config, e *Env, v string) { e.TmpDir = "/private/tmp/t" + v },
			func(v string) string { return filepath.Clean("/private/tmp/t" + v) }},
		{"command id (log tag)", func(_ *settings.Config, e *Env, v string) { e.CommandID = v; e.Command = v }, nil},
	}
	gen := func(f field, v string) (*Profile, error) {
		cfg := settings.Default()
		cfg.Network.AllowUnixSockets = []string{"/x/sock"}
		cfg.Filesystem.AllowWrite = []settings.PathEntry{{Path: "/x/w"}}
		cfg.Filesystem.DenyRead = []settings.PathEntry{{Path: "/x/r"}}
		env := Env{Command: "true", Cwd: "/w/p", Home: "/h/u", HTTPPort: 3128, SOCKSPort: 1080, Nonce: "n", FS: fsview.NewMem(nil)}
		f.set(cfg, &env, v)
		in, err := FromSettings(cfg, env)
		if err != nil {
			return nil, err
		}
		return Generate(in)
	}
	for _, f := range fields {
		base, err := gen(f, "plain")
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		baseForms, err := tsRead(base.SBPL)
		if err != nil {
			t.Fatalf("%s: the plain profile does not read: %v", f.name, err)
		}
		for _, v := range hostileValues {
			// Literal escapes in the Go source are meant as the
			// characters a JSON settings file can hold: \n below is a
			// backslash and an n, which is legal in a path.
			p, err := gen(f, v)
			if err != nil {
				t.Errorf("%s = %q refused: %v", f.name, v, err)
				continue
			}
			forms, err := tsRead(p.SBPL)
			if err != nil {
				t.Errorf("%s = %q: the profile does not read: %v", f.name, v, err)
				continue
			}
			want := tsSkeleton(baseForms)
			if f.name == "allowMachLookup" && strings.HasSuffix(v, "*") {
				star, err := gen(f, "plain*") // the prefix form: another rule
				if err != nil {
					t.Fatal(err)
				}
				starForms, _ := tsRead(star.SBPL)
				want = tsSkeleton(starForms)
			}
			if got := tsSkeleton(forms); got != want {
				t.Errorf("%s = %q changed the profile's structure", f.name, v)
				continue
			}
			if f.want != nil {
				strs := map[string]bool{}
				tsStrings(forms, strs)
				if w := f.want(v); !strs[w] {
					t.Errorf("%s = %q: no string %q in the profile", f.name, v, w)
				}
			}
		}
		// Control characters and invalid UTF-8 are refused naming the
		// setting (cwd/home/TMPDIR/command: their own wording).
		for _, v := range []string{"a\nb", "a\x00b", "a\rb", "\xff", "a\x1bb", "a\u0085b"} {
			if f.name == "command id (log tag)" {
				// The command reaches the profile only as base64.
				p, err := gen(f, v)
				if err != nil {
					t.Errorf("command %q refused: %v", v, err)
				} else if _, err := tsRead(p.SBPL); err != nil {
					t.Errorf("command %q: %v", v, err)
				}
				continue
			}
			if p, err := gen(f, v); err == nil {
				t.Errorf("%s = %q accepted:\n%s", f.name, v, p.SBPL)
			}
		}
	}
}

// regexStrings are the (regex …) strings of a profile.
func regexStrings(ds []tsDatum, out *[]string) {
	for _, d := range ds {
		if d.kind == 'l' && len(d.list) == 2 && d.list[0].kind == 'a' && d.list[0].text == "regex" && d.list[1].kind == 's' {
			*out = append(*out, d.list[1].text)
		}
		regexStrings(d.list, out)
	}
}

// TestReviewRegexMetaInLiteralPaths puts regex metacharacters in the
// working directory (the literal part of every "**/.bashrc" regex): the
// regexes must match the working directory's own .bashrc at any depth and
// nothing that only a metacharacter's meaning would match.
func TestReviewRegexMetaInLiteralPaths(t *testing.T) {
	for _, c := range []struct{ cwd, other string }{
		{"/w/a.b", "/w/axb"},
		{"/w/a+", "/w/aa"},
		{"/w/a*", "/w/aaa"},
		{"/w/(x)", "/w/x"},
		{"/w/[x]", "/w/x"},
		{"/w/a|b", "/w/b"},
		{"/w/a?", "/w/a"},
		{"/w/a{2}", "/w/aa"},
		{"/w/a^b", "/w/ab"},
		{"/w/a$b", "/w/ab"},
		{`/w/a\.b`, "/w/a.b"},
		{`/w/a\`, "/w/a"},
		{"/w/[^/]", "/w/z"},
		{"/w/é.", "/w/éx"},
	} {
		cfg := settings.Default()
		in, err := FromSettings(cfg, Env{Command: "true", Cwd: c.cwd, Home: "/h", Nonce: "n", FS: fsview.NewMem(nil)})
		if err != nil {
			t.Fatalf("%s: %v", c.cwd, err)
		}
		p, err := Generate(in)
		if err != nil {
			t.Fatalf("%s: %v", c.cwd, err)
		}
		forms, err := tsRead(p.SBPL)
		if err != nil {
			t.Fatal(err)
		}
		var res []string
		regexStrings(forms, &res)
		var bashrc *regexp.Regexp
		for _, r := range res {
			if strings.Contains(r, `(/[^/]+)*`) && (strings.Contains(r, `\.bashrc(`) || strings.Contains(r, `[Bb][Aa][Ss][Hh][Rr][Cc](`)) {
				bashrc = regexp.MustCompilePOSIX(r)
			}
		}
		if bashrc == nil {
			t.Fatalf("%s: no .bashrc regex in %q", c.cwd, res)
		}
		for _, want := range []string{c.cwd + "/d/.bashrc", c.cwd + "/d/e/.bashrc/x"} {
			if !bashrc.MatchString(want) {
				t.Errorf("%s: %s does not match %s", c.cwd, bashrc, want)
			}
		}
		if bad := c.other + "/d/.bashrc"; bashrc.MatchString(bad) {
			t.Errorf("%s: %s matches %s", c.cwd, bashrc, bad)
		}
	}
}

// reviewProfile is the profile of the golden case name, read.
func reviewProfile(t *testing.T, name string) []sexp {
	t.Helper()
	for _, c := range goldenCases {
		if c.name == name {
			forms, err := parseSBPL(profileOf(t, c).SBPL)
			if err != nil {
				t.Fatal(err)
			}
			return forms
		}
	}
	t.Fatalf("no golden case %s", name)
	return nil
}

// TestReviewLinksAndClones: a hard link (file-link) or a clone
// (file-clone) of a protected file into a writable directory would let
// the command write the protected file's bytes through another name, or
// read a hidden file's: neither operation may be allowed anywhere, the
// write roots included.
func TestReviewLinksAndClones(t *testing.T) {
	for _, name := range []string{"typical", "defaults", "deny-root", "credentials", "disabled"} {
		forms := reviewProfile(t, name)
		for _, op := range []string{"file-link", "file-clone", "file-mknod", "file-mount", "file-revoke", "file-chroot"} {
			for _, path := range []string{"/Users/u/proj/x", "/private/tmp/claude/x", "/Users/u/.bashrc"} {
				if decide(t, forms, op, path) {
					t.Errorf("%s: %s %s allowed", name, op, path)
				}
			}
		}
	}
}

// TestReviewWriteOperationsCovered: every write operation Seatbelt has
// (not only file-write-data) is denied on the protected paths of the
// typical profile, and allowed in the project.
func TestReviewWriteOperationsCovered(t *testing.T) {
	forms := reviewProfile(t, "typical")
	ops := []string{"file-write-data", "file-write-create", "file-write-unlink", "file-write-xattr", "file-write-mode",
		"file-write-owner", "file-write-flags", "file-write-times", "file-write-setugid", "file-write-acl"}
	for _, op := range ops {
		for _, p := range []string{"/Users/u/proj/.bashrc", "/Users/u/proj/a/b/.git/hooks/pre-commit", "/Users/u/proj/.vscode/tasks.json",
			"/Users/u/.bashrc", "/Users/u/proj/.env", "/Users/u/proj/k.pem", "/Users/u/.ssh/id_ed25519", "/Users/u/proj/deep/.claude/settings.json"} {
			if decide(t, forms, op, p) {
				t.Errorf("%s %s allowed", op, p)
			}
		}
		if !decide(t, forms, op, "/Users/u/proj/src/new.go") {
			t.Errorf("%s in the project denied", op)
		}
	}
	// Reads: a hidden file's metadata and data, and its xattrs.
	for _, op := range []string{"file-read-data", "file-read-xattr", "file-read-metadata"} {
		if decide(t, forms, op, "/Users/u/.ssh/id_ed25519") {
			t.Errorf("%s of a hidden file allowed", op)
		}
	}
}

// TestReviewReadLayers: denyRead beneath allowRead beneath denyRead, and
// allowRead beneath denyRead beneath allowWrite: the nearest rule wins,
// for reads and writes alike.
func TestReviewReadLayers(t *testing.T) {
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{
		"denyRead":["/Users/u/a","/Users/u/a/b/c","/Users/u/w/h"],"allowRead":["/Users/u/a/b","/Users/u/a/b/c/d","/Users/u/w/h/o"],
		"allowWrite":["/Users/u/w","/Users/u/a/b"],"denyWrite":["/Users/u/w/nw"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := FromSettings(cfg, Env{Command: "true", Cwd: "/Users/u/w", Home: "/Users/u", Nonce: "n", FS: macHost()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	forms, err := parseSBPL(p.SBPL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, path string
		ok       bool
	}{
		{"file-read-data", "/Users/u/a/x", false},
		{"file-read-data", "/Users/u/a/b/x", true},
		{"file-read-data", "/Users/u/a/b/c/x", false},
		{"file-read-data", "/Users/u/a/b/c/d/x", true},
		{"file-write-data", "/Users/u/a/b/x", true},
		{"file-write-data", "/Users/u/a/b/c/x", false},
		{"file-write-data", "/Users/u/a/b/c/d/x", true},
		{"file-read-data", "/Users/u/w/h/x", false},
		{"file-write-data", "/Users/u/w/h/x", false},
		{"file-write-create", "/Users/u/w/h/x", false},
		{"file-read-data", "/Users/u/w/h/o/x", true},
		{"file-write-data", "/Users/u/w/h/o/x", true},
		{"file-write-data", "/Users/u/w/nw/x", false},
		{"file-write-unlink", "/Users/u/w/nw", false},
		{"file-write-unlink", "/Users/u/w/h", false},
		{"file-write-unlink", "/Users/u/a/b/c", false},
		{"file-write-data", "/Users/u/a/b/c/d/.bashrc", true}, // not beneath cwd
		{"file-write-data", "/Users/u/w/h/o/.bashrc", false},
	} {
		if got := decide(t, forms, c.op, c.path); got != c.ok {
			t.Errorf("%s %s: allowed = %v, want %v", c.op, c.path, got, c.ok)
		}
	}
}

// TestReviewNetwork: without allowLocalBinding only the proxy ports are
// reached, and nothing is bound but them; without allowUnixSockets no
// Unix socket; with them, those paths alone.
func TestReviewNetwork(t *testing.T) {
	type netRule struct{ action, op, filter string }
	rules := func(sbpl string) []netRule {
		forms, err := tsRead(sbpl)
		if err != nil {
			t.Fatal(err)
		}
		var out []netRule
		for _, f := range forms {
			if len(f.list) < 2 || f.list[1].kind != 'a' || !strings.HasPrefix(f.list[1].text, "network") && f.list[1].text != "system-socket" {
				continue
			}
			var fl []string
			for _, x := range f.list[2:] {
				fl = append(fl, tsSkeletonWith(x))
			}
			out = append(out, netRule{f.list[0].text, f.list[1].text, strings.Join(fl, " ")})
		}
		return out
	}
	for _, c := range []struct {
		name, settings string
		want           []string
	}{
		{"none", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, []string{
			`allow network-bind (local ip "localhost:3128")`, `allow network-inbound (local ip "localhost:3128")`, `allow network-outbound (remote ip "localhost:3128")`,
			`allow network-bind (local ip "localhost:1080")`, `allow network-inbound (local ip "localhost:1080")`, `allow network-outbound (remote ip "localhost:1080")`,
		}},
		{"sockets", `{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":["/private/var/run/s.sock"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, []string{
			`allow system-socket (socket-domain AF_UNIX)`,
			`allow network-bind (local unix-socket (subpath "/private/var/run/s.sock"))`,
			`allow network-outbound (remote unix-socket (subpath "/private/var/run/s.sock"))`,
			`allow network-bind (local ip "localhost:3128")`, `allow network-inbound (local ip "localhost:3128")`, `allow network-outbound (remote ip "localhost:3128")`,
			`allow network-bind (local ip "localhost:1080")`, `allow network-inbound (local ip "localhost:1080")`, `allow network-outbound (remote ip "localhost:1080")`,
		}},
	} {
		cfg, err := settings.Parse([]byte(c.settings))
		if err != nil {
			t.Fatal(err)
		}
		in, err := FromSettings(cfg, Env{Command: "true", Cwd: "/Users/u/proj", Home: "/Users/u", HTTPPort: 3128, SOCKSPort: 1080, Nonce: "n", FS: macHost()})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rules(p.SBPL) {
			got = append(got, r.action+" "+r.op+" "+r.filter)
		}
		// The base's AF_SYSTEM socket is not network.
		got = slicesDelete(got, `allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2))`)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: network rules\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

func slicesDelete(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func tsSkeletonWith(d tsDatum) string {
	switch d.kind {
	case 'a':
		return d.text
	case 's':
		return strconv.Quote(d.text)
	}
	var parts []string
	for _, x := range d.list {
		parts = append(parts, tsSkeletonWith(x))
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// TestReviewEnvironment: denied variables are gone from the command's
// environment (every copy), the proxy token is never in the argv, TMPDIR
// is the command's own.
func TestReviewEnvironment(t *testing.T) {
	cfg, err := settings.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},
		"credentials":{"envVars":[{"name":"GITHUB_TOKEN","mode":"deny"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := FromSettings(cfg, Env{Command: "true", Cwd: "/Users/u/proj", Home: "/Users/u", HTTPPort: 3128, SOCKSPort: 1080,
		ProxyToken: token, TmpDir: "/private/tmp/srt-own", Nonce: "n", FS: macHost(),
		Environ: []string{"GITHUB_TOKEN=a", "PATH=/bin", "GITHUB_TOKEN=b", "TMPDIR=/var/folders/x", "github_token=lower"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range p.Env {
		if strings.HasPrefix(kv, "GITHUB_TOKEN=") {
			t.Errorf("the denied variable is in the environment: %s", kv)
		}
	}
	tmps := 0
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmps++
			if v != "/private/tmp/srt-own" {
				t.Errorf("TMPDIR=%s", v)
			}
		}
	}
	if tmps != 1 {
		t.Errorf("%d TMPDIR in %q", tmps, p.Env)
	}
	if strings.Contains(strings.Join(p.Argv, "\x00"), token) || strings.Contains(p.SBPL, token) {
		t.Error("the proxy token is in the argv or the profile")
	}
	if !strings.Contains(strings.Join(p.Env, "\n"), token) {
		t.Error("the proxy token is nowhere in the environment: the test tests nothing")
	}
}

// TestReviewCaseVariantsOfProtectedNames (FAILS at the time of writing):
// macOS's default volume (APFS) is case-insensitive, so a file created as
// ".VSCODE/tasks.json" is what VS Code opens as ".vscode/tasks.json",
// ".CLAUDE/settings.json" what Claude Code reads as ".claude/…". Seatbelt
// compares the spelled path of a file that does not exist yet with the
// profile's strings byte for byte, so a case variant of a protected name
// that does not exist yet must be denied by the profile itself.
func TestReviewCaseVariantsOfProtectedNames(t *testing.T) {
	forms := reviewProfile(t, "typical")
	for _, p := range []string{
		"/Users/u/proj/.VSCODE", "/Users/u/proj/.Vscode/tasks.json", "/Users/u/proj/.CLAUDE/settings.json",
		"/Users/u/proj/.MCP.json", "/Users/u/proj/.BASHRC", "/Users/u/proj/sub/.Idea/x.xml",
		"/Users/u/proj/.git/HOOKS/pre-commit", "/Users/u/proj/a/.GIT/hooks/pre-commit", "/Users/u/.ZSHRC",
	} {
		for _, op := range []string{"file-write-create", "file-write-data"} {
			if decide(t, forms, op, p) {
				t.Errorf("%s %s allowed: on a case-insensitive volume this is the protected name", op, p)
			}
		}
	}
}

// TestReviewMoveIntoProtectedDepth: a rename checks only its two paths: a
// directory built where it is not protected (TMPDIR, or beneath cwd under
// another name) and renamed into place beneath the working directory
// brings its protected contents with it. Seatbelt has no rule over a
// renamed tree's contents; docs/macos.md states the limit (the reference
// has it too, and Linux protects no name made after the start). The test
// stays, skipped by that reason, so that a fix shows by removing the skip.
func TestReviewMoveIntoProtectedDepth(t *testing.T) {
	t.Skip("known limit, docs/macos.md: a tree renamed into the working directory keeps the protected names it holds")
	forms := reviewProfile(t, "typical")
	// mkdir -p $TMPDIR/t/.vscode && echo … > $TMPDIR/t/.vscode/tasks.json
	for _, p := range []string{"/private/tmp/claude/t", "/private/tmp/claude/t/.vscode", "/private/tmp/claude/t/.vscode/tasks.json"} {
		if !decide(t, forms, "file-write-create", p) {
			t.Fatalf("%s cannot be created: the scenario does not hold", p)
		}
	}
	for _, mv := range []struct{ from, to, lands string }{
		// mv $TMPDIR/t ./y  →  ./y/.vscode/tasks.json
		{"/private/tmp/claude/t", "/Users/u/proj/y", "/Users/u/proj/y/.vscode/tasks.json"},
		// mkdir -p y/g/hooks; echo … > y/g/hooks/pre-commit; mv y/g y/.git
		{"/Users/u/proj/y/g", "/Users/u/proj/y/.git", "/Users/u/proj/y/.git/hooks/pre-commit"},
	} {
		if decide(t, forms, "file-write-data", mv.lands) {
			t.Fatalf("%s is writable anyway: the scenario does not hold", mv.lands)
		}
		if decide(t, forms, "file-write-unlink", mv.from) && decide(t, forms, "file-write-create", mv.to) {
			t.Errorf("mv %s %s is allowed, and %s, which the profile protects, then exists", mv.from, mv.to, mv.lands)
		}
	}
}

// TestReviewLogForgedByUserMessage (FAILS at the time of writing): any
// process may write a message to the unified log (logger, os_log — the
// sandbox allows com.apple.system.logger and com.apple.logd), and `log
// stream --predicate 'eventMessage ENDSWITH …'` passes every sender's
// message. A line whose sender is not the kernel is not a denial, whatever
// its text; nor is the continuation line of a kernel message that holds a
// newline (a path with "\nSandbox: …" in it).
func TestReviewLogForgedByUserMessage(t *testing.T) {
	const nonce = "k3j9x2m1p"
	tag := LogTag("other command", nonce)
	for _, line := range []string{
		// logger "Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 <tag>"
		"2026-11-05 14:03:22.412 Df logger[41234:2f1a3] Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 " + tag,
		"2026-11-05 14:03:22.412 Df logger[41234:2f1a3] kernel[0:1] (Sandbox) Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 " + tag,
		"2026-11-05 14:03:22.412 E  kernel[41234:2f1a3] (Sandbox) Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 " + tag,
		"2026-11-05 14:03:22.412345-0800 0x2f1a3    Default     0x0                  41234  0    logger: Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 " + tag,
		// The second line of a kernel message whose path holds a newline.
		"Sandbox: curl(1) deny(1) network-outbound 1.2.3.4:443 " + tag,
	} {
		if d, ok := ParseLogLine(line, nonce); ok {
			t.Errorf("ParseLogLine(%q) = %+v: not the kernel's", line, d)
		}
	}
	// The kernel's own lines still parse.
	for _, line := range []string{
		"2026-11-05 14:03:22.412 E  kernel[0:2f1a3] (Sandbox) Sandbox: cat(41234) deny(1) file-read-data /x " + tag,
		"2026-11-05 14:03:22.412345-0800 0x2f1a3    Error       0x0                  0      0    kernel: (Sandbox) Sandbox: cat(41234) deny(1) file-read-data /x " + tag,
	} {
		if _, ok := ParseLogLine(line, nonce); !ok {
			t.Errorf("ParseLogLine(%q) refused", line)
		}
	}
}

// TestReviewLogHugeAndHostileLines: the parser is linear on huge lines and
// hostile process names (one holding the tag, "deny(", parentheses).
func TestReviewLogHugeAndHostileLines(t *testing.T) {
	const nonce = "k3j9x2m1p"
	tag := LogTag("x", nonce)
	hdr := "2026-11-05 14:03:22.412 E  kernel[0:2f1a3] (Sandbox) Sandbox: "
	start := time.Now()
	for _, line := range []string{
		hdr + strings.Repeat(") deny(", 1<<20) + " " + tag,
		hdr + strings.Repeat("(", 1<<20) + "1) deny(1) op /t " + tag,
		hdr + "cat(1) deny(1) op " + strings.Repeat("/a", 1<<20) + " " + tag,
		strings.Repeat("Sandbox: ", 1<<18) + tag,
	} {
		ParseLogLine(line, nonce)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("4 MiB of hostile lines took %v", d)
	}
	// A process name holding another command's tag and a fake deny: the
	// label is the kernel's, the last word.
	mine := LogTag("mine", nonce)
	d, ok := ParseLogLine(hdr+"x "+tag+"(5) deny(1) op /t(1) deny(1) file-read-data /y "+mine, nonce)
	if ok && d.Label != strings.TrimSuffix(strings.TrimPrefix(mine, "CMD64_"), "_END__"+nonce+"_SBX") {
		t.Errorf("label %q, want mine's", d.Label)
	}
}
