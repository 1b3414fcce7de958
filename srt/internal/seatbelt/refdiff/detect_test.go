package refdiff

import (
	"regexp"
	"strings"
	"testing"
)

// TestReferenceDiffDetects: the comparison is not blind. Changes to srt's
// profile that change a permission show as the difference they are, and
// changes that keep every permission show as none.
func TestReferenceDiffDetects(t *testing.T) {
	dir, node := referenceDir(t)
	root, reqs := setupCases(t, "every-macos-option", "write-cwd-deny")
	results := runReference(t, dir, node, reqs)
	byName := map[string]refCase{}
	for _, rc := range reqs {
		byName[rc.Name] = rc
	}
	for _, tc := range []struct {
		name, caseName string
		mutate         mutation
		want           string // "" = no difference beyond the unmutated run's; "<any>" matches any text
	}{
		{"a proxy port dropped", "every-macos-option", dropLine(`(allow network-outbound (remote ip "localhost:1080"))`),
			`reference-only: rule L0 allow network-outbound (remote ip "localhost:1080")`},
		{"all outbound network", "every-macos-option", appendRule(`(allow network-outbound)`),
			`srt-only: rule L0 allow network-outbound`},
		{"a Mach service prefix widened", "every-macos-option", replace(`(global-name-prefix "com.c.")`, `(global-name-prefix "com.")`),
			`srt-only: rule L0 allow mach-lookup (global-name-prefix "com.")`},
		{"pty lost", "every-macos-option", dropLine(`(allow pseudo-tty)`),
			`reference-only: rule L0 allow pseudo-tty`},
		{"a write deny lost", "write-cwd-deny", replace(`(subpath "/@ROOT@/home/proj/secret")`, ``),
			`reference-only: rule L0 deny file-write*`},
		{"everything writable at the end", "write-cwd-deny", appendRule(`(allow file-write* (subpath "/"))`),
			`srt-only: rule L0 allow file-write*<any> (subpath "/")`},
		{"an import", "write-cwd-deny", appendRule(`(import "bsd.sb")`),
			`srt-only: form (import "bsd.sb")`},
		{"a rule repeated", "write-cwd-deny", repeatLine(`(allow file-read*)`), ""},
		{"a deny spelled as its regex", "write-cwd-deny", replace(`(subpath "/@ROOT@/home/proj/secret")`, `(regex #"^/@ROOT@/home/proj/secret(/.*)?$")`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := byName[tc.caseName]
			// The placeholders stand for the case's paths in the mutation.
			real := func(s string) string { return strings.ReplaceAll(s, "/@ROOT@", root+"/"+rc.Name) }
			base := strings.Join(compareCase(t, rc, results[rc.Name], root, dir, nil), "\n")
			got := compareCase(t, rc, results[rc.Name], root, dir, func(p string) string {
				q := tc.mutate(p, real)
				if q == p {
					t.Fatalf("the mutation changed nothing")
				}
				return q
			})
			var extra []string
			for _, d := range got {
				if !strings.Contains(base, d) {
					extra = append(extra, d)
				}
			}
			if tc.want == "" {
				if len(extra) > 0 {
					t.Fatalf("a change that keeps every permission shows as:\n%s", strings.Join(extra, "\n"))
				}
				return
			}
			parts := strings.Split(tc.want, "<any>")
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			want := regexp.MustCompile("^" + strings.Join(parts, ".*"))
			for _, d := range extra {
				if want.MatchString(d) {
					return
				}
			}
			t.Fatalf("want a difference starting %q, got:\n%s", tc.want, strings.Join(extra, "\n"))
		})
	}
}

// A mutation of srt's profile text; real maps placeholders to the case's
// paths.
type mutation = func(profile string, real func(string) string) string

func dropLine(line string) mutation {
	return func(p string, real func(string) string) string {
		return strings.Replace(p, real(line)+"\n", "", 1)
	}
}

func repeatLine(line string) mutation {
	return func(p string, real func(string) string) string {
		return strings.Replace(p, real(line)+"\n", real(line)+"\n"+real(line)+"\n", 1)
	}
}

func appendRule(rule string) mutation {
	return func(p string, real func(string) string) string { return p + "\n" + real(rule) + "\n" }
}

func replace(old, new string) mutation {
	return func(p string, real func(string) string) string {
		return strings.Replace(p, real(old), real(new), 1)
	}
}
