package decide

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// policyImporters are the only packages of srt-proxy that may import the
// policy kernel (decider/policy), each with the reason it must:
var policyImporters = map[string]string{
	// This package: it joins the proxy to the decider and builds what the
	// decider's lists imply (the host gate of proxy-only mode, the
	// resolved-address policy, the excludeDomains matcher).
	"github.com/srt-sandbox/srt-proxy/internal/decide": "the seam",
	// The dialer applies the resolved-address policy decide builds
	// (policy.AddressPolicy) to the addresses it is about to dial, at the
	// dial (STYLE 3), and its zero value applies the built-in address
	// rules: no other code opens outbound sockets to check them.
	"github.com/srt-sandbox/srt-proxy/internal/dial": "the address check at the dial",
}

// TestOnlyDecideImportsPolicy: srt-proxy holds no policy. Of its packages
// (tests aside), only those in policyImporters import decider/policy;
// every other one reaches policy through the Asker (internal/proxy/ask)
// and parses hosts with decider/hostname.
func TestOnlyDecideImportsPolicy(t *testing.T) {
	const policyPath = "github.com/srt-sandbox/decider/policy"
	cmd := exec.Command("go", "list", "-json", "github.com/srt-sandbox/srt-proxy/...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var importers, listed []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Dir        string
			GoFiles    []string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, p.ImportPath)
		// Read what go list read, so that the test's cached result goes
		// stale when a package's files or imports change.
		if _, err := os.ReadDir(p.Dir); err != nil {
			t.Fatal(err)
		}
		for _, f := range p.GoFiles {
			if _, err := os.ReadFile(filepath.Join(p.Dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		if slices.Contains(p.Imports, policyPath) {
			importers = append(importers, p.ImportPath)
		}
	}
	if !slices.Contains(listed, "github.com/srt-sandbox/srt-proxy/internal/proxy") || len(listed) < 10 {
		t.Fatalf("go list did not list srt-proxy's packages: %v", listed)
	}
	for _, p := range importers {
		if _, ok := policyImporters[p]; !ok {
			t.Errorf("%s imports %s: srt-proxy holds no policy (ask the decider through internal/proxy/ask, parse hosts with decider/hostname)", p, policyPath)
		}
	}
	if !slices.Contains(importers, "github.com/srt-sandbox/srt-proxy/internal/decide") {
		t.Errorf("internal/decide no longer imports %s: the test looks at the wrong import path (importers: %v)", policyPath, importers)
	}
}
