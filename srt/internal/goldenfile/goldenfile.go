// Package goldenfile compares a test's output with a golden file in its
// package's testdata directory, and rewrites the file when asked (the
// -update flag of the test that uses it).
package goldenfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with testdata/<name>.golden, or writes it there when
// update is set. what names the output in the failure ("plan",
// "profile").
func Check(t *testing.T, what, name, got string, update bool) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", what, file, got, want)
	}
}
