package glob

import (
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// treePaths lists every path of a NewMem spec: its keys, their parents and /.
func treePaths(spec map[string]string) []string {
	set := map[string]bool{"/": true}
	for k := range spec {
		for p := filepath.Clean(k); p != "/"; p = filepath.Dir(p) {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// wantMatches is what Expand must find without following symlinks: the tree
// paths that match. The Prefix is resolved (Expand follows symlinks within
// it), so tree paths beneath the resolved Prefix are re-spelled beneath the
// Prefix as written before being matched.
func wantMatches(f fsview.FS, paths []string, p *Pattern) []string {
	prefix := p.Prefix()
	real, err := fsview.Realpath(f, prefix)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range paths {
		if !fsview.IsWithin(t, real) {
			continue
		}
		spelled := prefix + strings.TrimPrefix(t, real)
		if real == "/" && prefix != "/" {
			spelled = prefix + t
		}
		if spelled = filepath.Clean(spelled); p.Match(spelled) {
			out = append(out, spelled)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkAgrees expands p over the tree and compares with wantMatches.
func checkAgrees(t *testing.T, spec map[string]string, p *Pattern) {
	t.Helper()
	m := fsview.NewMem(spec)
	got, err := Expand(m, p, ExpandOptions{})
	if err != nil {
		t.Fatalf("Expand(%q): %v", p, err)
	}
	want := wantMatches(m, treePaths(spec), p)
	if !slices.Equal(got.Matches, want) {
		t.Fatalf("Expand(%q) over %v:\n got  %q\n want %q", p, spec, got.Matches, want)
	}
	if len(got.Unlistable) != 0 {
		t.Fatalf("Expand(%q): unlistable %q in a readable tree", p, got.Unlistable)
	}
}

var (
	treeNames = []string{"a", "b", "ab", "ba", ".a", "a.pem", "[ab]", "x"}
	segPicks  = []string{"a", "b", "ab", "x", ".a", "[ab]", "*", "?", "a*", "*b", "*.pem", "[ab]", "[!a]*", "**", "**", "a**"}
)

func randomTree(r *rand.Rand) map[string]string {
	spec := map[string]string{}
	var grow func(dir string, depth int)
	grow = func(dir string, depth int) {
		for range 1 + r.Intn(4) {
			p := dir + "/" + treeNames[r.Intn(len(treeNames))]
			if _, dup := spec[p]; dup {
				continue
			}
			switch k := r.Intn(6); {
			case k < 3 && depth < 3:
				spec[p] = "dir"
				grow(p, depth+1)
			case k == 2:
				// Symlink names never appear as literal pattern segments, so
				// the Prefix is never reached through one.
				spec[dir+"/l"+treeNames[r.Intn(len(treeNames))]] = "-> " + dir
			default:
				spec[p] = "file"
			}
		}
	}
	grow("/r", 0)
	return spec
}

func randomPattern(r *rand.Rand) string {
	segs := []string{"r"}
	if r.Intn(8) == 0 {
		segs = nil // leading wildcard or a miss at the root
	}
	for range 1 + r.Intn(4) {
		segs = append(segs, segPicks[r.Intn(len(segPicks))])
	}
	return "/" + strings.Join(segs, "/")
}

func TestExpandAgreesWithMatch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 300 {
		spec := randomTree(r)
		for range 20 {
			p, err := Compile(randomPattern(r))
			if err != nil {
				t.Fatal(err)
			}
			checkAgrees(t, spec, p)
		}
	}
}

func TestMatchAgreesWithRegexp(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	pathNames := []string{"a", "b", "ab", "ba", "aab", ".a", "a.pem", "[ab]", "é", "-", "!"}
	picks := slices.Concat(segPicks, []string{"[a-b]?", "?*?", "*a*", "[!é]", "[-a]b", "a[]b", "**b"})
	for range 3000 {
		segs := make([]string, 1+r.Intn(4))
		for i := range segs {
			segs[i] = picks[r.Intn(len(picks))]
		}
		p, err := Compile("/" + strings.Join(segs, "/"))
		if err != nil {
			t.Fatal(err)
		}
		re, _ := refRegexp(p)
		for range 20 {
			path := ""
			for range 1 + r.Intn(5) {
				path += "/" + pathNames[r.Intn(len(pathNames))]
			}
			if p.Match(path) != re.MatchString(path) {
				t.Fatalf("%q: Match(%q) = %v, regexp %s disagrees", p, path, p.Match(path), re)
			}
		}
	}
}
