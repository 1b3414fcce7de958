package glob

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
)

// TestExpandTooManyEntriesCharges: the error says where the walk's entries
// were, by the directory the filesystem was asked about, so that a caller
// can hide what filled it; a symlink followed charges its target.
func TestExpandTooManyEntriesCharges(t *testing.T) {
	spec := map[string]string{"/r/.env": "file", "/r/loop/l": "-> ../big"}
	for _, f := range []string{"1", "2", "3", "4", "5", "6"} {
		spec["/r/big/"+f] = "file"
	}
	p, _ := Compile("/r/**/.env")
	_, err := Expand(fsview.NewMem(spec), p, ExpandOptions{FollowSymlinks: true, MaxEntries: 12})
	var over *TooManyEntriesError
	if !errors.As(err, &over) || !errors.Is(err, ErrTooManyEntries) {
		t.Fatalf("error = %v, want a *TooManyEntriesError", err)
	}
	// /r lists 3, big 6, loop 1, and big again through the link: 16.
	want := map[string]int{"/r": 3, "/r/big": 12, "/r/loop": 1}
	via := map[string]string{"/r/big": "/r/loop"}
	if !maps.Equal(over.Charged, want) || !maps.Equal(over.Via, via) || over.Limit != 12 || over.Dir != "/r/loop/l" {
		t.Errorf("got %+v, want Charged %v, Via %v, Limit 12, Dir /r/loop/l", over, want, via)
	}
}

// TestExpandSkip: a skipped directory is neither listed nor entered, by
// any name, and can still match itself.
func TestExpandSkip(t *testing.T) {
	m := &countingFS{FS: fsview.NewMem(map[string]string{
		"/r/.env":          "file",
		"/r/junk/.env":     "file",
		"/r/junk/sub/.env": "file",
		"/r/via":           "-> junk/sub",
		"/r/src/.env":      "file",
	})}
	p, _ := Compile("/r/**")
	got, err := Expand(m, p, ExpandOptions{FollowSymlinks: true, Skip: func(dir string) bool { return dir == "/r/junk" || dir == "/r/junk/sub" }})
	if err != nil {
		t.Fatal(err)
	}
	wantMatches := []string{"/r/.env", "/r/junk", "/r/src", "/r/src/.env", "/r/via"}
	if !slices.Equal(got.Matches, wantMatches) {
		t.Errorf("matches %q, want %q", got.Matches, wantMatches)
	}
	if wantListed := []string{"/r", "/r/src"}; !slices.Equal(m.listed, wantListed) {
		t.Errorf("listed %q, want %q", m.listed, wantListed)
	}
}
