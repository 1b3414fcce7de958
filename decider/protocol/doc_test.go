package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package doc's sequence diagram is the spec's, copied (STYLE.md 9):
// this keeps the two the same.
func TestDocDiagramMatchesSpec(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "decider-protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(spec), "## Sequence\n\n```\n")
	if !ok {
		t.Fatal("docs/decider-protocol.md has no sequence diagram")
	}
	want, _, _ := strings.Cut(after, "```")

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, line := range strings.Split(string(doc), "\n") {
		if d, ok := strings.CutPrefix(line, "//\t"); ok {
			got.WriteString(d + "\n")
		}
	}
	if got.String() != want {
		t.Fatalf("doc.go's diagram differs from docs/decider-protocol.md's:\n%s\nwant\n%s", got.String(), want)
	}
}
