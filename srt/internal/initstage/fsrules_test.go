package initstage

import (
	"reflect"
	"testing"
)

// TestFSRulesRefused: the deepest guard at or above a path decides, a later
// guard at the same path wins, "/" decides with none; the sandbox's own
// /dev and /proc are never refused; a relative path is never refused.
func TestFSRulesRefused(t *testing.T) {
	r := &FSRules{Root: ViewReadOnly, Guards: []Guard{
		{"/home/u/proj", ViewWritable},
		{"/home/u/proj/.bashrc", ViewReadOnly},
		{"/home/u/proj/.git/hooks", ViewReadOnly},
		{"/home/u/.ssh", ViewHidden},
		{"/home/u/proj/secret", ViewHidden},
		{"/home/u/proj/secret", ViewWritable}, // later at the same path: wins
		{"/dev/null-cover", ViewHidden},
	}}
	for _, c := range []struct {
		path        string
		write, read bool // refused
	}{
		{"/etc/foo", true, false},
		{"/home/u/proj/a.txt", false, false},
		{"/home/u/proj", false, false},
		{"/home/u/projx", true, false},
		{"/home/u/proj/.bashrc", true, false},
		{"/home/u/proj/.git/hooks/pre-commit", true, false},
		{"/home/u/.ssh/id_rsa", true, true},
		{"/home/u/.ssh", true, true},
		{"/home/u/proj/secret/x", false, false},
		{"/dev/shm/x", false, false},
		{"/dev/null-cover", false, false},
		{"/proc/self/fd/1", false, false},
		{"relative", false, false},
		{"", false, false},
	} {
		if got := r.Refused(c.path, true); got != c.write {
			t.Errorf("write %q: refused %v, want %v", c.path, got, c.write)
		}
		if got := r.Refused(c.path, false); got != c.read {
			t.Errorf("read %q: refused %v, want %v", c.path, got, c.read)
		}
	}
	if !r.Hides() || (&FSRules{Root: ViewReadOnly, Guards: []Guard{{"/a", ViewReadOnly}}}).Hides() {
		t.Errorf("Hides")
	}
}

// FuzzFSRules: any bytes decode to rules or an error, never a panic; rules
// that decode encode back to themselves; Refused never panics.
func FuzzFSRules(f *testing.F) {
	f.Add((&FSRules{Root: ViewReadOnly, Guards: []Guard{{"/a", ViewWritable}, {"/a/b", ViewHidden}}}).Encode(), "/a/b/c")
	f.Add([]byte("r"), "/")
	f.Add([]byte("rw/x\x00h\x00"), "/x")
	f.Add([]byte("w/\xff\xfe\x00"), "/\xff\xfe/y")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		r, err := DecodeFSRules(data)
		if err != nil {
			return
		}
		r2, err := DecodeFSRules(r.Encode())
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip: %v, %+v vs %+v", err, r, r2)
		}
		r.Refused(path, true)
		r.Refused(path, false)
	})
}
