//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCrypto: srt links no crypto package (docs/architecture.md,
// docs/tls-termination.md). Go sets its FIPS module up at the start of a
// program that links one, and srt's start is on the path of every
// sandboxed command: srt-proxy holds the keys and makes the certificates,
// and srt draws its random bytes with getrandom(2) itself.
func TestNoCrypto(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-json", "github.com/srt-sandbox/srt/cmd/srt")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p struct {
			ImportPath, Dir string
			Standard        bool
			GoFiles         []string
			Imports         []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		if !p.Standard {
			// Read what go list read, so that the test's cached result
			// goes stale when a package's files change.
			for _, f := range p.GoFiles {
				if _, err := os.ReadFile(filepath.Join(p.Dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if p.ImportPath == "crypto" || strings.HasPrefix(p.ImportPath, "crypto/") {
			continue // named where it is imported from outside
		}
		for _, imp := range p.Imports {
			if imp == "crypto" || strings.HasPrefix(imp, "crypto/") {
				t.Errorf("%s imports %s: srt links no crypto package (draw random bytes with unix.Getrandom)", p.ImportPath, imp)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list listed %d packages: the test looks at the wrong thing", n)
	}
}
