package seatbelt

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/settings"
)

func TestSBPLString(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "/a/b", want: `"/a/b"`},
		{in: `/a/"b"`, want: `"/a/\"b\""`},
		{in: `/a\b\`, want: `"/a\\b\\"`},
		{in: `/a")(allow default)("`, want: `"/a\")(allow default)(\""`},
		{in: "/Users/ü/日本", want: `"/Users/ü/日本"`},
		{in: "/a;b#|c|", want: `"/a;b#|c|"`},
		{in: "/a\nb", err: "control character U+000A"},
		{in: "/a\x00b", err: "control character U+0000"},
		{in: "/a\x7fb", err: "control character U+007F"},
		{in: "/a\u0085b", err: "control character U+0085"},
		{in: "/a\xffb", err: "not valid UTF-8"},
	} {
		got, err := sbplString(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("sbplString(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("sbplString(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if back, n, err := readString(got); err != nil || n != len(got) || back != c.in {
			t.Errorf("reading %s back: %q, %d, %v", got, back, n, err)
		}
	}
}

// sexp is one datum of a profile: an atom, a string, or a list.
type sexp struct {
	atom   string
	str    string
	isStr  bool
	list   []sexp
	isList bool
}

// parseSBPL reads a profile as SBPL's reader does for what srt writes:
// comments to the end of the line, lists, "strings" with backslash
// escapes, #"raw strings" and atoms.
func parseSBPL(s string) ([]sexp, error) {
	var stack [][]sexp
	var cur []sexp
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ';':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, cur)
			cur = nil
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			l := sexp{list: cur, isList: true}
			cur = append(stack[len(stack)-1], l)
			stack = stack[:len(stack)-1]
			i++
		case c == '"':
			v, n, err := readString(s[i:])
			if err != nil {
				return nil, fmt.Errorf("at %d: %v", i, err)
			}
			cur = append(cur, sexp{str: v, isStr: true})
			i += n
		case strings.HasPrefix(s[i:], `#"`):
			end := strings.IndexByte(s[i+2:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated raw string at %d", i)
			}
			cur = append(cur, sexp{str: s[i+2 : i+2+end], isStr: true})
			i += end + 3
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \n\t()\";", rune(s[j])) {
				j++
			}
			cur = append(cur, sexp{atom: s[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d unclosed (", len(stack))
	}
	return cur, nil
}

// readString reads the string literal s starts with; it returns its value
// and its length.
func readString(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return "", 0, fmt.Errorf("a backslash ends the profile")
			}
			i++
			if s[i] != '"' && s[i] != '\\' {
				return "", 0, fmt.Errorf("escape \\%c, which srt never writes", s[i])
			}
			b.WriteByte(s[i])
		case '"':
			return b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// shape is a profile's rules without their strings and filters: each
// top-level form's head and operations.
func shape(forms []sexp) []string {
	var out []string
	for _, f := range forms {
		var heads []string
		for _, e := range f.list {
			if e.isList {
				break
			}
			if e.isStr {
				heads = append(heads, "<string>")
			} else {
				heads = append(heads, e.atom)
			}
		}
		out = append(out, strings.Join(heads, " "))
	}
	return out
}

// stringsOf lists every string of the profile.
func stringsOf(forms []sexp, out map[string]bool) {
	for _, f := range forms {
		if f.isStr {
			out[f.str] = true
		}
		stringsOf(f.list, out)
	}
}

// injection is a setting a fuzzed value is written into, and the string
// the profile must then hold.
type injection struct {
	field string
	set   func(cfg *settings.Config, env *Env, v string)
	want  func(v string) string
}

var injections = []injection{
	{"filesystem.denyRead.0", func(c *settings.Config, _ *Env, v string) {
		c.Filesystem.DenyRead = []settings.PathEntry{{Path: "/x/" + v, Literal: true}}
	}, func(v string) string { return filepath.Clean("/x/" + v) }},
	{"filesystem.allowRead.0", func(c *settings.Config, _ *Env, v string) {
		c.Filesystem.DenyRead = []settings.PathEntry{{Path: "/"}} // no allow sorts before it
		c.Filesystem.AllowRead = []settings.PathEntry{{Path: "/x/" + v, Literal: true}}
	}, func(v string) string { return filepath.Clean("/x/" + v) }},
	{"filesystem.denyWrite.0", func(c *settings.Config, _ *Env, v string) {
		c.Filesystem.DenyWrite = []settings.PathEntry{{Path: "/x/" + v, Literal: true}}
	}, func(v string) string { return filepath.Clean("/x/" + v) }},
	{"filesystem.allowWrite.0", func(c *settings.Config, _ *Env, v string) {
		c.Filesystem.AllowWrite = []settings.PathEntry{{Path: "/x/" + v, Literal: true}}
	}, func(v string) string { return filepath.Clean("/x/" + v) }},
	{"network.allowUnixSockets.0", func(c *settings.Config, _ *Env, v string) {
		c.Network.AllowUnixSockets = []string{"/x/" + v}
	}, func(v string) string { return filepath.Clean("/x/" + v) }},
	{"network.allowMachLookup.0", func(c *settings.Config, _ *Env, v string) {
		c.MacOS.AllowMachLookup = []string{"com.x." + v}
	}, func(v string) string { return strings.TrimSuffix("com.x."+v, "*") }},
	{"the working directory", func(_ *settings.Config, e *Env, v string) {
		e.Cwd = filepath.Clean("/w/" + v)
	}, func(v string) string { return filepath.Join(filepath.Clean("/w/"+v), ".bashrc") }},
}

// profileFor generates the profile of a settings with v written into one
// setting.
func profileFor(inj injection, v string) (*Profile, error) {
	cfg := settings.Default()
	cfg.Network.AllowUnixSockets = []string{"/x/sock"}
	cfg.Filesystem.AllowWrite = []settings.PathEntry{{Path: "/x/w"}}
	cfg.Filesystem.DenyRead = []settings.PathEntry{{Path: "/x/r"}}
	env := Env{Command: "true", Cwd: "/w/p", Home: "/h", HTTPPort: 3128, SOCKSPort: 1080, Nonce: "n", FS: fsview.NewMem(nil)}
	inj.set(cfg, &env, v)
	in, err := FromSettings(cfg, env)
	if err != nil {
		return nil, err
	}
	return Generate(in)
}

// FuzzProfileStructure writes a value into each setting that reaches the
// profile and checks that no value can end a string or add a rule: the
// profile reads back (with SBPL's reader rules) into the same rules as
// with a plain value, and holds the value as one string; or the value is
// refused with an error naming the setting.
func FuzzProfileStructure(f *testing.F) {
	for _, s := range []string{"plain", `a"b`, `a\b`, `")(allow default)("`, `\"`, "ü/日本", "a\nb", "a\x00", "\xff", "a*b", "[x]", "#\"", ";c", "..", "../../..", "a/**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, inj := range injections {
			base, err := profileFor(inj, "plain")
			if err != nil {
				t.Fatal(err)
			}
			baseForms, err := parseSBPL(base.SBPL)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profileFor(inj, v)
			if err != nil {
				bad := !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 })
				if !bad || !strings.Contains(err.Error(), inj.field) {
					t.Fatalf("%s = %q: %v", inj.field, v, err)
				}
				continue
			}
			forms, err := parseSBPL(p.SBPL)
			if err != nil {
				t.Fatalf("%s = %q: the profile does not read back: %v\n%s", inj.field, v, err, p.SBPL)
			}
			if got, want := strings.Join(shape(forms), "\n"), strings.Join(shape(baseForms), "\n"); got != want {
				t.Fatalf("%s = %q changed the profile's rules:\n%s\n--- with a plain value:\n%s", inj.field, v, got, want)
			}
			strs := map[string]bool{}
			stringsOf(forms, strs)
			if w := inj.want(v); !strs[w] {
				t.Fatalf("%s = %q: the profile holds no string %q", inj.field, v, w)
			}
		}
	})
}
