package sbpl

import (
	"strings"
	"testing"
)

func diffText(t *testing.T, a, b string) string {
	t.Helper()
	onlyA, onlyB, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range onlyA {
		lines = append(lines, "-"+e.String())
	}
	for _, e := range onlyB {
		lines = append(lines, "+"+e.String())
	}
	return strings.Join(lines, "\n")
}

// TestEquivalent: spellings with the same permissions normalise alike.
func TestEquivalent(t *testing.T) {
	for _, tc := range []struct{ name, a, b string }{
		{"filter order and duplicates",
			`(allow file-read* (subpath "/a") (literal "/b") (subpath "/a"))`,
			`(allow file-read* (literal "/b")) (allow file-read* (subpath "/a"))`},
		{"require-any is separate rules",
			`(allow network-outbound (require-any (remote ip "localhost:1") (remote ip "localhost:2")))`,
			`(allow network-outbound (remote ip "localhost:2")) (allow network-outbound (remote ip "localhost:1"))`},
		{"require-all order",
			`(allow file-ioctl (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))`,
			`(allow file-ioctl (require-all (vnode-type CHARACTER-DEVICE) (literal "/dev/null")))`},
		{"require-all over require-any distributes",
			`(allow file-read* (require-all (vnode-type FILE) (require-any (literal "/a") (literal "/b"))))`,
			`(allow file-read* (require-all (literal "/b") (vnode-type FILE)) (require-all (literal "/a") (vnode-type FILE)))`},
		{"regex spelling",
			`(deny file-write* (regex "^/a/(.*/)?\\.git(/.*)?$"))`,
			`(deny file-write* (regex #"^/a/(.*/)?[.]git(/.*)?$"))`},
		{"wildcard against its leaves, same layer",
			`(deny default) (allow file-read*)`,
			`(deny default) (allow file-read*) (allow file-read-data)`},
		{"independent operations commute",
			`(deny default) (allow network-outbound (remote ip "localhost:1")) (allow file-write* (subpath "/w")) (deny file-write* (subpath "/w/x"))`,
			`(deny default) (allow file-write* (subpath "/w")) (deny file-write* (subpath "/w/x")) (allow network-outbound (remote ip "localhost:1"))`},
		{"earlier rule overridden by an identical later one is dead",
			`(deny file-read* (subpath "/s")) (allow file-read* (literal "/s/k")) (deny file-read* (subpath "/s"))`,
			`(allow file-read* (literal "/s/k")) (deny file-read* (subpath "/s"))`},
		{"rule beneath a later subpath is dead",
			`(allow file-write* (literal "/w/a")) (deny file-write* (subpath "/w"))`,
			`(deny file-write* (subpath "/w"))`},
		{"covered rule in the same run",
			`(allow file-write* (subpath "/w") (subpath "/w/sub") (literal "/w/f"))`,
			`(allow file-write* (subpath "/w"))`},
		{"message on an allow is not a permission",
			`(allow file-read* (subpath "/a") (with message "T"))`,
			`(allow file-read* (subpath "/a"))`},
		{"unconditional later rule kills earlier",
			`(deny file-read* (subpath "/x")) (allow file-read*)`,
			`(allow file-read*)`},
		{"same paths, other regex spelling",
			`(deny file-write* (regex #"^/p/(.*/)?\.bashrc(/.*)?$"))`,
			`(deny file-write* (regex #"^/p(/[^/]+)*/\.bashrc(/.*)?$"))`},
		{"subpath and its regex",
			`(deny file-write* (subpath "/a.b"))`,
			`(deny file-write* (regex #"^/a\.b(/.*)?$"))`},
		{"deny that only repeats deny default",
			`(deny default (with message "T")) (allow file-write* (subpath "/w") (regex #"^/x/[^/]*\.log$")) (deny file-write* (subpath "/h/.bashrc") (with message "T"))`,
			`(deny default (with message "T")) (allow file-write* (subpath "/w") (regex #"^/x/[^/]*\.log$"))`},
		{"rules that match nothing in common commute",
			`(allow file-read*) (deny file-read* (subpath "/s")) (allow file-read* (subpath "/jar"))`,
			`(allow file-read*) (allow file-read* (subpath "/jar")) (deny file-read* (subpath "/s"))`},
		{"a conjunction of disjoint paths matches nothing",
			`(deny default) (allow file-write* (require-all (subpath "/a") (subpath "/b")))`,
			`(deny default)`},
		{"deny behind an overlapping deny that repeats deny default",
			`(deny default (with message "T")) (allow file-write* (subpath "/w")) (deny file-write* (regex #"\.pem$") (with message "T")) (deny file-write* (subpath "/h/.bashrc") (with message "T"))`,
			`(deny default (with message "T")) (allow file-write* (subpath "/w")) (deny file-write* (regex #"\.pem$") (with message "T"))`},
		{"ipc-posix-shm is a wildcard",
			`(allow ipc-posix-shm)`,
			`(allow ipc-posix-shm*)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := diffText(t, tc.a, tc.b); d != "" {
				t.Fatalf("want equal, diff:\n%s", d)
			}
		})
	}
}

// TestDifferent: profiles with different permissions never normalise
// alike, and the diff names the rule.
func TestDifferent(t *testing.T) {
	for _, tc := range []struct{ name, a, b, want string }{
		{"deny/allow order matters",
			`(allow file-read* (subpath "/a")) (deny file-read* (subpath "/a/s"))`,
			`(deny file-read* (subpath "/a/s")) (allow file-read* (subpath "/a"))`,
			`-deny file-read* (subpath "/a/s")`},
		{"subpath is not literal",
			`(allow file-write* (subpath "/w"))`,
			`(allow file-write* (literal "/w"))`,
			`-allow file-write* (subpath "/w")` + "\n" + `+allow file-write* (literal "/w")`},
		{"subpath is not a name prefix",
			`(allow file-write* (subpath "/w")) (allow file-write* (subpath "/wx"))`,
			`(allow file-write* (subpath "/w"))`,
			`-allow file-write* (subpath "/wx")`},
		{"missing port",
			`(allow network-outbound (remote ip "localhost:1") (remote ip "localhost:2"))`,
			`(allow network-outbound (remote ip "localhost:1"))`,
			`-allow network-outbound (remote ip "localhost:2")`},
		{"message on a deny counts",
			`(deny default (with message "A"))`,
			`(deny default (with message "B"))`,
			`-deny default (with message "A")` + "\n" + `+deny default (with message "B")`},
		{"regex text",
			`(deny file-write* (regex #"^/a/\.git$"))`,
			`(deny file-write* (regex #"^/a/.git$"))`,
			`-deny file-write* (regex #"^/a/\.git$")` + "\n" + `+deny file-write* (regex #"^/a/.git$")`},
		{"require-not operand",
			`(allow file-read* (require-not (literal "/a")))`,
			`(allow file-read* (require-not (literal "/b")))`,
			`-allow file-read* (require-not (literal "/a"))` + "\n" + `+allow file-read* (require-not (literal "/b"))`},
		{"a nested directory itself is not beneath it",
			`(deny file-write* (regex #"^/p/(.*/)?\.vscode/.*(/.*)?$"))`,
			`(deny file-write* (regex #"^/p(/[^/]+)*/\.vscode(/.*)?$"))`,
			`-deny file-write* (regex #"^/p/(.*/)?\.vscode/.*(/.*)?$")`},
		{"deny inside an allow is not redundant",
			`(deny default (with message "T")) (allow file-write* (subpath "/h")) (deny file-write* (subpath "/h/.bashrc") (with message "T"))`,
			`(deny default (with message "T")) (allow file-write* (subpath "/h"))`,
			`-deny file-write* (subpath "/h/.bashrc") (with message "T")`},
		{"deny under an overlapping regex allow is not redundant",
			`(deny default (with message "T")) (allow file-write* (regex #"^/h/")) (deny file-write* (subpath "/h/.bashrc") (with message "T"))`,
			`(deny default (with message "T")) (allow file-write* (regex #"^/h/"))`,
			`-deny file-write* (subpath "/h/.bashrc") (with message "T")`},
		{"a relative path is not known to be disjoint",
			`(deny default (with message "T")) (allow file-write* (subpath "x/h")) (deny file-write* (subpath "x/h/.bashrc") (with message "T"))`,
			`(deny default (with message "T")) (allow file-write* (subpath "x/h"))`,
			`-deny file-write* (subpath "x/h/.bashrc") (with message "T")`},
		{"deny with another message is not redundant",
			`(deny default (with message "T")) (deny file-write* (subpath "/h/.bashrc") (with message "U"))`,
			`(deny default (with message "T"))`,
			`-deny file-write* (subpath "/h/.bashrc") (with message "U")`},
		{"leaf beneath a wildcard",
			`(deny default) (allow file-read*)`,
			`(deny default) (allow file-read-data)`,
			"-allow file-read*\n+deny file-read*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := diffText(t, tc.a, tc.b)
			if d == "" {
				t.Fatalf("want a difference, got equal")
			}
			if !strings.Contains(d, tc.want) {
				t.Fatalf("diff:\n%s\nwant it to contain:\n%s", d, tc.want)
			}
		})
	}
}

func TestGroupEntries(t *testing.T) {
	onlyA, _, err := Compare(`(allow file-write-data (subpath "/w")) (deny file-write* (subpath "/p"))`, `(allow file-write-data (subpath "/w"))`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range GroupEntries(onlyA) {
		got = append(got, g.String())
	}
	want := `L0 deny file-write*,file-write-data (subpath "/p")`
	if strings.Join(got, "|") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
}
