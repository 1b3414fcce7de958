package sbpl

import (
	"os"
	"testing"
)

// FuzzParse: any input parses or fails with an error (no panic, bounded
// work); what parses prints back to a profile that parses to the same
// normal form, and a profile never differs from itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`(version 1) (deny default (with message "T")) (allow file-read*)`,
		`(allow file-read* (subpath "/a") (regex #"^/a/(.*/)?\.git$") (literal "/b\"\\\x41;"))`,
		`(allow network-outbound (require-any (remote ip "localhost:1") (remote unix-socket (path-literal "/s"))))`,
		`(allow file-ioctl (require-all (literal "/dev/null") (require-not (vnode-type DIRECTORY))))`,
		`(allow mach-lookup (global-name-prefix "com.apple.") (global-name (param "X")))`,
		`#| c |# ; c` + "\n" + `(import "system.sb") (debug deny)`,
	} {
		f.Add(s)
	}
	if b, err := os.ReadFile("testdata/reference-sample.sb"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if err != nil {
			return
		}
		leaves := Leaves(p)
		n1, err := Normalize(p, leaves)
		if err != nil {
			return
		}
		out := Format(p)
		p2, err := Parse(out)
		if err != nil {
			t.Fatalf("Format output does not parse: %v\n%s", err, out)
		}
		n2, err := Normalize(p2, leaves)
		if err != nil {
			t.Fatalf("Format output does not normalise: %v\n%s", err, out)
		}
		if a, b := Diff(n1, n2); len(a)+len(b) > 0 {
			t.Fatalf("round trip changed the rules: only before %v, only after %v\n%s", a, b, out)
		}
	})
}
