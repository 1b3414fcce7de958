package refdiff

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/srt-sandbox/srt/internal/sbpl"
	"github.com/srt-sandbox/srt/internal/seatbelt"
	"github.com/srt-sandbox/srt/internal/version"
	"github.com/srt-sandbox/srt/settings"
)

// The ports both generators are told srt's proxies listen on.
const httpPort, socksPort = 3128, 1080

// refCase is what refgen.mjs reads for one case.
type refCase struct {
	Name      string            `json:"name"`
	Cwd       string            `json:"cwd"`
	Home      string            `json:"home"`
	Env       map[string]string `json:"env"`
	Settings  json.RawMessage   `json:"settings"`
	Command   string            `json:"command"`
	Shell     string            `json:"shell"`
	HTTPPort  int               `json:"httpProxyPort,omitempty"`
	SOCKSPort int               `json:"socksProxyPort,omitempty"`
}

type refResult struct {
	Name, Version, Wrapped, Error, ResetError string
}

// referenceDir finds the reference package, or skips (loudly) when it or
// Node is absent, or fails when SRT_REQUIRE_REFERENCE=1.
func referenceDir(t *testing.T) (dir, node string) {
	t.Helper()
	missing := func(why string) {
		msg := "SKIPPED: the differential test of the macOS profile against the reference did not run: " + why +
			". Install Node and the reference (npm install --prefix /tmp/ref @anthropic-ai/sandbox-runtime@" + version.Reference +
			") and set SRT_REFERENCE_DIR=/tmp/ref/node_modules/@anthropic-ai/sandbox-runtime; scripts/test does both."
		if os.Getenv("SRT_REQUIRE_REFERENCE") == "1" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, "\n*** "+msg+"\n")
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	dir = os.Getenv("SRT_REFERENCE_DIR")
	if dir == "" {
		missing("SRT_REFERENCE_DIR is not set")
	}
	var pkg struct{ Name, Version string }
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil {
		t.Fatalf("SRT_REFERENCE_DIR=%s is not the reference package: %v", dir, err)
	}
	if pkg.Name != "@anthropic-ai/sandbox-runtime" || pkg.Version != version.Reference {
		t.Fatalf("SRT_REFERENCE_DIR=%s holds %s %s; the comparison is with @anthropic-ai/sandbox-runtime %s", dir, pkg.Name, pkg.Version, version.Reference)
	}
	return dir, node
}

// runReference runs refgen.mjs on the cases.
func runReference(t *testing.T, dir, node string, cases []refCase) map[string]refResult {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/refgen.mjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "SRT_REFERENCE_DIR="+dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("refgen.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	res := map[string]refResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r refResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("refgen.mjs printed %q: %v", sc.Text(), err)
		}
		res[r.Name] = r
	}
	if len(res) != len(cases) {
		t.Fatalf("refgen.mjs answered %d of %d cases; stderr:\n%s", len(res), len(cases), stderr.String())
	}
	return res
}

// allowed is one line of deliberate-differences.txt.
type allowed struct {
	line              int
	cases, side, diff string
	re                *regexp.Regexp
	used              bool
}

const allowListFile = "testdata/deliberate-differences.txt"

// readAllowList reads "case-glob | side | difference | reason" lines.
func readAllowList(t *testing.T) []*allowed {
	t.Helper()
	b, err := os.ReadFile(allowListFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []*allowed
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Split(l, " | ")
		if len(f) != 4 || strings.TrimSpace(f[3]) == "" || (f[1] != "srt-only" && f[1] != "reference-only") {
			t.Fatalf("%s:%d: want \"<case glob> | srt-only|reference-only | <difference> | <reason>\", got %q", allowListFile, i+1, l)
		}
		if _, err := path.Match(f[0], ""); err != nil {
			t.Fatalf("%s:%d: bad case glob %q: %v", allowListFile, i+1, f[0], err)
		}
		parts := strings.Split(f[2], "<any>")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		out = append(out, &allowed{line: i + 1, cases: f[0], side: f[1], diff: f[2], re: regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")})
	}
	return out
}

func (a *allowed) matches(name, side, diff string) bool {
	ok, _ := path.Match(a.cases, name)
	return ok && a.side == side && a.re.MatchString(diff)
}

// TestReferenceProfiles is the differential test: every case, both
// generators, the same permissions and environment but for the reviewed
// deliberate differences.
func TestReferenceProfiles(t *testing.T) {
	dir, node := referenceDir(t)
	allow := readAllowList(t)
	root, reqs := setupCases(t)
	results := runReference(t, dir, node, reqs)
	var unexplained []string
	for _, rc := range reqs {
		t.Run(rc.Name, func(t *testing.T) {
			diffs := compareCase(t, rc, results[rc.Name], root, dir, nil)
			var bad []string
			for _, d := range diffs {
				side, text, _ := strings.Cut(d, ": ")
				ok := false
				for _, a := range allow {
					if a.matches(rc.Name, side, text) {
						a.used, ok = true, true
					}
				}
				if !ok {
					bad = append(bad, d)
				}
			}
			if len(bad) > 0 {
				unexplained = append(unexplained, rc.Name)
				t.Errorf("%d differences from the reference not listed in %s:\n  %s", len(bad), allowListFile, strings.Join(bad, "\n  "))
			}
		})
	}
	// A line no case needs any more is stale, unless -run picked cases.
	if run := flag.Lookup("test.run"); !t.Failed() && len(unexplained) == 0 && (run == nil || !strings.Contains(run.Value.String(), "/")) {
		for _, a := range allow {
			if !a.used {
				t.Errorf("%s:%d: no case differs by %q any more: remove the line", allowListFile, a.line, a.diff)
			}
		}
	}
}

// setupCases makes each case's home and working directory (and files)
// beneath a new temporary directory: all cases, or those named.
func setupCases(t *testing.T, names ...string) (root string, reqs []refCase) {
	t.Helper()
	root = t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for _, c := range cases {
		if len(names) > 0 && !slices.Contains(names, c.name) {
			continue
		}
		home := filepath.Join(root, c.name, "home")
		cwd := filepath.Join(home, "proj")
		if c.cwdOutsideHome {
			cwd = filepath.Join(root, c.name, "work")
		}
		for _, d := range []string{home, cwd} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range c.files {
			p := filepath.Join(root, c.name, f)
			if strings.HasSuffix(f, "/") {
				err := os.MkdirAll(p, 0o755)
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for l, target := range c.links {
			if err := os.Symlink(target, filepath.Join(root, c.name, l)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := c.command
		if cmd == "" {
			cmd = "echo hi"
		}
		reqs = append(reqs, refCase{Name: c.name, Cwd: cwd, Home: home, Env: c.env, Settings: json.RawMessage(c.settings), Command: cmd, Shell: "/bin/bash", HTTPPort: httpPort, SOCKSPort: socksPort})
	}
	return root, reqs
}

// compareCase generates srt's side of one case and lists its differences
// from the reference's, each "<side>: <difference>".
func compareCase(t *testing.T, rc refCase, ref refResult, root, refDir string, mutate func(string) string) []string {
	t.Helper()
	if ref.Error != "" {
		t.Fatalf("the reference failed on this case: %s", ref.Error)
	}
	rw, err := parseWrapped(ref.Wrapped)
	if err != nil {
		t.Fatalf("the reference's command: %v", err)
	}
	cfg, err := settings.Parse(rc.Settings)
	if err != nil {
		t.Fatalf("srt refuses the settings: %v", err)
	}
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + rc.Home}
	for k, v := range rc.Env {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	in, err := seatbelt.FromSettings(cfg, seatbelt.Env{Command: rc.Command, Shell: rc.Shell, Cwd: rc.Cwd, Home: rc.Home, Environ: environ, HTTPPort: rc.HTTPPort, SOCKSPort: rc.SOCKSPort, Nonce: "srtnonce"})
	if err != nil {
		t.Fatalf("seatbelt.FromSettings: %v", err)
	}
	prof, err := seatbelt.Generate(in)
	if err != nil {
		t.Fatalf("seatbelt.Generate: %v", err)
	}
	if mutate != nil {
		prof.SBPL = mutate(prof.SBPL)
	}
	refTag := tagOf(rw.sbpl)
	if refTag == "" {
		t.Fatalf("the reference's profile has no (deny default (with message …)):\n%s", rw.sbpl)
	}
	clean := func(s, tag string) string {
		s = strings.ReplaceAll(s, tag, "@TAG@")
		s = strings.ReplaceAll(s, refDir, "/@REF@")
		return strings.ReplaceAll(s, root+"/"+rc.Name, "/@ROOT@")
	}
	if dump := os.Getenv("SRT_REFDIFF_DUMP"); dump != "" {
		os.MkdirAll(dump, 0o755)
		os.WriteFile(filepath.Join(dump, rc.Name+".ref.sb"), []byte(clean(rw.sbpl, refTag)), 0o644)
		os.WriteFile(filepath.Join(dump, rc.Name+".srt.sb"), []byte(clean(prof.SBPL, prof.LogTag)), 0o644)
	}
	var diffs []string
	add := func(side, format string, args ...any) { diffs = append(diffs, side+": "+fmt.Sprintf(format, args...)) }

	onlySrt, onlyRef, err := sbpl.Compare(clean(prof.SBPL, prof.LogTag), clean(rw.sbpl, refTag))
	if err != nil {
		t.Fatalf("comparing the profiles: %v", err)
	}
	// The forms that are no rules: (version), (import), (debug).
	ps, err1 := sbpl.Parse(prof.SBPL)
	pr, err2 := sbpl.Parse(rw.sbpl)
	if err1 != nil || err2 != nil {
		t.Fatalf("parsing the profiles: %v, %v", err1, err2)
	}
	if ps.Version != pr.Version {
		add("srt-only", "form (version %s)", ps.Version)
		add("reference-only", "form (version %s)", pr.Version)
	}
	for _, f := range setDiff(ps.Other, pr.Other) {
		add("srt-only", "form %s", f)
	}
	for _, f := range setDiff(pr.Other, ps.Other) {
		add("reference-only", "form %s", f)
	}
	for _, g := range sbpl.GroupEntries(onlySrt) {
		add("srt-only", "rule %s", g)
	}
	for _, g := range sbpl.GroupEntries(onlyRef) {
		add("reference-only", "rule %s", g)
	}

	// The tag's attribution part (the nonce differs by design).
	if a, b := tagLabel(prof.LogTag), tagLabel(refTag); a != b {
		add("srt-only", "tag %s", a)
		add("reference-only", "tag %s", b)
	}

	// The environment changes.
	srtSet := map[string]string{}
	for _, op := range prof.Set {
		srtSet[op.Name] = clean(op.Value, prof.LogTag)
	}
	for _, n := range setDiff(prof.Unset, rw.unset) {
		add("srt-only", "env -u %s", n)
	}
	for _, n := range setDiff(rw.unset, prof.Unset) {
		add("reference-only", "env -u %s", n)
	}
	for _, k := range sortedKeys(srtSet) {
		if v, ok := rw.set[k]; !ok || clean(v, refTag) != srtSet[k] {
			add("srt-only", "env %s=%s", k, srtSet[k])
		}
	}
	for _, k := range sortedKeys(rw.set) {
		if v, ok := srtSet[k]; !ok || v != clean(rw.set[k], refTag) {
			add("reference-only", "env %s=%s", k, clean(rw.set[k], refTag))
		}
	}

	// What runs under the profile.
	srtExec := append([]string{prof.Argv[0]}, prof.Argv[3:]...)
	refExec := append([]string{rw.exe}, rw.rest...)
	if a, b := strings.Join(srtExec, " "), strings.Join(refExec, " "); a != b {
		add("srt-only", "exec %s", a)
		add("reference-only", "exec %s", b)
	}
	return diffs
}

var tagRE = regexp.MustCompile(`\(deny default \(with message "([^"]*)"\)\)`)

func tagOf(profile string) string {
	m := tagRE.FindStringSubmatch(profile)
	if m == nil {
		return ""
	}
	return m[1]
}

// tagLabel is a log tag without its nonce: CMD64_<label>_END__.
func tagLabel(tag string) string {
	if i := strings.Index(tag, "_END__"); i >= 0 {
		return tag[:i+len("_END__")]
	}
	return tag
}

func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
