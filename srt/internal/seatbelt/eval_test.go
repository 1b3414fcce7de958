package seatbelt

import (
	"regexp"
	"strings"
	"testing"
)

// decide evaluates a profile as Seatbelt does for a file operation on a
// path: the last rule whose operation and filters match decides. It reads
// what srt writes: subpath, literal, regex, require-all and require-any;
// a vnode-type never matches (the test names no file type).
func decide(t *testing.T, forms []sexp, op, path string) bool {
	t.Helper()
	allowed := false
	for _, f := range forms {
		if len(f.list) == 0 || f.list[0].isList || (f.list[0].atom != "allow" && f.list[0].atom != "deny") {
			continue
		}
		var ops []string
		var filters []sexp
		for _, e := range f.list[1:] {
			switch {
			case !e.isList:
				ops = append(ops, e.atom)
			case len(e.list) > 0 && e.list[0].atom == "with":
			default:
				filters = append(filters, e)
			}
		}
		if !opMatches(ops, op) {
			continue
		}
		match := len(filters) == 0
		for _, flt := range filters {
			match = match || filterMatches(t, flt, path)
		}
		if match {
			allowed = f.list[0].atom == "allow"
		}
	}
	return allowed
}

func opMatches(ops []string, op string) bool {
	for _, o := range ops {
		if o == "default" || o == op || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
			return true
		}
	}
	return false
}

func filterMatches(t *testing.T, f sexp, path string) bool {
	t.Helper()
	head := f.list[0].atom
	switch head {
	case "subpath":
		p := f.list[1].str
		return path == p || p == "/" || strings.HasPrefix(path, p+"/")
	case "literal":
		return path == f.list[1].str
	case "regex":
		return regexp.MustCompilePOSIX(f.list[1].str).MatchString(path)
	case "require-all", "require-any":
		all := head == "require-all"
		for _, g := range f.list[1:] {
			if filterMatches(t, g, path) != all {
				return !all
			}
		}
		return all
	case "vnode-type":
		return false
	}
	t.Fatalf("filter %s is not evaluated", head)
	return false
}

// TestProfileDecisions evaluates the golden profiles for the operations
// that matter: what the settings hide stays unreadable (files created
// later included), what they protect unwritable, and the protection
// cannot be renamed away; what they allow is allowed.
func TestProfileDecisions(t *testing.T) {
	type check struct {
		op, path string
		allowed  bool
	}
	r := func(path string, ok bool) check { return check{"file-read-data", path, ok} }
	w := func(path string, ok bool) check { return check{"file-write-data", path, ok} }
	mv := func(path string, ok bool) check { return check{"file-write-unlink", path, ok} }
	mk := func(path string, ok bool) check { return check{"file-write-create", path, ok} }
	want := map[string][]check{
		"defaults": {
			r("/etc/passwd", true), r("/Users/u/.ssh/id_ed25519", true),
			w("/Users/u/proj/src/main.go", false), w("/etc/passwd", false),
			w("/private/tmp/claude/x", true), w("/dev/null", true), w("/Users/u/.npm/_logs/x.log", true),
		},
		"typical": {
			r("/Users/u/.ssh/id_ed25519", false), r("/Users/u/.ssh/known_hosts", true),
			r("/Users/u/.aws/credentials", false), r("/Users/u/proj/.env", false),
			r("/Users/u/proj/keys/new/later.pem", false), r("/Users/u/proj/x.pem/inside", false),
			r("/Users/u/other/x.pem", true), r("/Users/u/proj/src/main.go", true),
			w("/Users/u/proj/src/main.go", true), w("/Users/u/proj/new/file", true),
			w("/private/tmp/build/o", true), w("/tmp/build/o", false), // Seatbelt sees /private/tmp
			w("/Users/u/proj/deploy.sh", false), w("/Users/u/proj/src/yarn.lock", false), w("/Users/u/proj/src/a/yarn.lock", true),
			w("/Users/u/proj/.bashrc", false), w("/Users/u/proj/a/b/c/.bashrc", false), w("/Users/u/proj/.git/hooks/pre-commit", false),
			w("/Users/u/proj/sub/.git/config", false), w("/Users/u/proj/.claude/settings.json", false), w("/Users/u/proj/.vscode/tasks.json", false),
			w("/Users/u/proj/.git/HEAD", true), w("/Users/u/proj/.env", false), w("/Users/u/proj/k.pem", false),
			mv("/Users/u/proj", false), mv("/Users/u/proj/.git", false), mv("/Users/u/proj/.bashrc", false),
			mv("/Users/u/proj/src", false), mv("/Users/u/proj/src/main.go", true), mk("/Users/u/proj/src/new.go", true),
			mv("/Users/u/proj/keys/k.pem", false), mk("/Users/u/proj/.bashrc", false),
		},
		"disabled": {
			r("/Users/u/.ssh/id_ed25519", true), w("/etc/passwd", true), w("/Users/u/proj/.bashrc", true),
			w("/Users/u/.srt-settings.json", false), mv("/Users/u/.srt-settings.json", false), mv("/Users", false),
		},
		"credentials": {
			r("/Users/u/.aws/credentials", false), r("/Users/u/.netrc", false), r("/Users/u/ca/ca.key", false),
			r("/Users/u/.aws/config", true), w("/Users/u/proj/a", true), w("/Users/u/.aws/credentials", false),
		},
		"brackets-in-cwd": {
			r("/Users/u/[WIP] proj (1)/secrets/a.key", false), r("/Users/u/[WIP] proj (1)/secrets/a.txt", true),
			r("/Users/u/W proj (1)/secrets/a.key", true), // the brackets are a name, not a set
			r("/Users/u/vault/[v1.2]/key", false), r("/Users/u/vault/v/key", false), r("/Users/u/vault/x/key", true),
			w("/Users/u/[WIP] proj (1)/a1.txt", false), w("/Users/u/[WIP] proj (1)/c1.txt", true),
			w("/Users/u/[WIP] proj (1)/d/.bashrc", false), w("/Users/u/[WIP] proj (1)/f", true),
		},
		"enclosing-repo-allow-git-config": {
			w("/Users/u/repo/.git/hooks/post-checkout", false), w("/Users/u/repo/.git/config", true),
			w("/Users/u/repo/pkg/a.go", true), w("/Users/u/repo/pkg/.git/config", true),
		},
		"deny-root": {
			r("/etc/passwd", false), r("/private/etc/passwd", false), r("/usr/bin/true", true), r("/dev/urandom", true),
			r("/Users/u/proj/src/main.go", true), r("/Users/u/proj/.env", false), r("/Users/u/.ssh/id_ed25519", false),
			w("/Users/u/proj/src/main.go", true), w("/Users/u/proj/.env", false), w("/dev/null", true), w("/usr/bin/true", false),
			mv("/Users/u/proj/.env", false), mv("/Users/u/proj/src/main.go", true),
		},
		"environment": {
			w("/private/tmp/srt-501-abc/x", true), w("/private/tmp/claude/x", false),
		},
	}
	for _, c := range goldenCases {
		checks, ok := want[c.name]
		if !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			forms, err := parseSBPL(profileOf(t, c).SBPL)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range checks {
				if got := decide(t, forms, ch.op, ch.path); got != ch.allowed {
					t.Errorf("%s %s: allowed = %v, want %v", ch.op, ch.path, got, ch.allowed)
				}
			}
		})
	}
}
