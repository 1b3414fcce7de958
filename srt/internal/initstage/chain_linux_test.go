package initstage

import "testing"

func TestChainSplit(t *testing.T) {
	for _, c := range []struct {
		path, dir, name string
		slash, ok       bool
	}{
		{"a", ".", "a", false, true},
		{"a/", ".", "a", true, true},
		{"/a", "/", "a", false, true},
		{"/x/y//z//", "/x/y/", "z", true, true},
		{"x/..", "", "", false, false},
		{".", "", "", false, false},
		{"/", "", "", true, false},
		{"a/./", "", "", true, false},
	} {
		dir, name, slash, ok := split(c.path)
		if dir != c.dir || name != c.name || slash != c.slash || ok != c.ok {
			t.Errorf("%q: got %q %q %v %v", c.path, dir, name, slash, ok)
		}
	}
}
