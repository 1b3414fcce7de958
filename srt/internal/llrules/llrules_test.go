package llrules

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
)

// tree makes dirs and files under a temporary root and returns it.
func tree(t *testing.T, paths ...string) string {
	root := t.TempDir()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if p[len(p)-1] == '/' {
			os.MkdirAll(full, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, nil, 0o644)
	}
	return root
}

func TestCarveWrites(t *testing.T) {
	root := tree(t, "w/a/", "w/a/x", "w/f", "w/.git/hooks/", "w/.git/objects/", "w/.bashrc", "other/")
	w := filepath.Join(root, "w")
	r := &initstage.FSRules{Root: initstage.ViewReadOnly, Guards: []initstage.Guard{
		{Path: w, View: initstage.ViewWritable},
		{Path: w + "/.bashrc", View: initstage.ViewHidden},
		{Path: w + "/.git/hooks", View: initstage.ViewReadOnly},
	}}
	gs, chains, err := Compute(fsview.OS{}, r, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{Path: w + "/.git/objects", Rights: "w"},
		{Path: w + "/a", Rights: "w"},
		{Path: w + "/f", Rights: "w"},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("got %v\nwant %v", gs, want)
	}
	// w and w/.git get no grant of their own: the supervisor makes their
	// entries, all but the protected names.
	wantChains := []Chain{{Path: w, Protected: []string{".bashrc", ".git"}}, {Path: w + "/.git", Protected: []string{"hooks"}}}
	if !reflect.DeepEqual(chains, wantChains) {
		t.Errorf("chains: got %v\nwant %v", chains, wantChains)
	}
}

// A writable directory with a hidden path beneath is a chain of the reads
// too, whose hidden names the supervisor refuses to open.
func TestCarveReadChains(t *testing.T) {
	root := tree(t, "p/.env", "p/src/a", "p/sub/.env", "p/sub/x")
	p := filepath.Join(root, "p")
	r := &initstage.FSRules{Root: initstage.ViewReadOnly, Guards: []initstage.Guard{
		{Path: p, View: initstage.ViewWritable},
		{Path: p + "/.env", View: initstage.ViewHidden},
		{Path: p + "/sub/.env", View: initstage.ViewHidden},
	}}
	_, chains, err := Compute(fsview.OS{}, r, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Chain{
		{Path: p, Protected: []string{".env", "sub"}},
		{Path: p + "/sub", Protected: []string{".env"}},
		{Path: p, Protected: []string{".env", "sub"}, Reads: true},
		{Path: p + "/sub", Protected: []string{".env"}, Reads: true},
	}
	if !reflect.DeepEqual(chains, want) {
		t.Errorf("chains: got %v\nwant %v", chains, want)
	}
}

func TestCarveReads(t *testing.T) {
	root := tree(t, "h/.ssh/id", "h/notes", "h/proj/", "h/cfg/secret.txt", "h/cfg/ok")
	h := filepath.Join(root, "h")
	r := &initstage.FSRules{Root: initstage.ViewReadOnly, Guards: []initstage.Guard{
		{Path: h + "/.ssh", View: initstage.ViewHidden},
		{Path: h + "/cfg/secret.txt", View: initstage.ViewHidden},
	}}
	gs, _, err := Compute(fsview.OS{}, r, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, g := range gs {
		got[g.Path] = g.Rights
	}
	// The hidden directory and file get nothing; their siblings a read
	// grant; h, above a hidden directory, is not listable; cfg, above a
	// hidden file only, is.
	for p, want := range map[string]string{h + "/notes": "r", h + "/proj": "r", h + "/cfg/ok": "r", h + "/cfg": "l", h + "/.ssh": "", h + "/cfg/secret.txt": "", h: "", "/": ""} {
		if got[p] != want {
			t.Errorf("%s: got %q, want %q", p, got[p], want)
		}
	}
	if got[filepath.Dir(root)] != "" && got["/usr"] != "r" {
		t.Errorf("/usr: got %q, want r", got["/usr"])
	}
}

// FuzzCompute: no grant ever covers a path the rules refuse, and no
// chain directory lets its supervisor change an entry that is or leads to
// one (every such entry's name is protected).
func FuzzCompute(f *testing.F) {
	f.Add([]byte("wr\x00hrx\x00"), true)
	f.Add([]byte("w\x00rw/a\x00hw/a/b\x00"), false)
	f.Fuzz(func(t *testing.T, spec []byte, reads bool) {
		root := tree(t, "a/b/c", "a/d/", "w/x", "w/y/z", "h/")
		names := []string{"", "a", "a/b", "a/b/c", "a/d", "w", "w/x", "w/y", "w/y/z", "h", "nope"}
		r := &initstage.FSRules{Root: initstage.ViewReadOnly}
		for i := 0; i+1 < len(spec) && len(r.Guards) < 8; i += 2 {
			v := []byte{initstage.ViewWritable, initstage.ViewReadOnly, initstage.ViewHidden}[int(spec[i])%3]
			r.Guards = append(r.Guards, initstage.Guard{Path: filepath.Join(root, names[int(spec[i+1])%len(names)]), View: v})
		}
		gs, chains, err := Compute(fsview.OS{}, r, reads, []string{"/proc", "/dev", "/sys", "/usr", "/etc", "/var", "/home", "/root", "/opt", "/srv", "/snap", "/boot", "/lib", "/lib64", "/bin", "/sbin", "/run", "/mnt", "/media", "/work"})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			p := filepath.Join(root, n)
			for _, g := range gs {
				if p != g.Path && !within(p, g.Path) {
					continue
				}
				for _, right := range g.Rights {
					if right == Write && r.Refused(p, true) {
						t.Fatalf("grant %v covers %s, whose writes the rules refuse (%v)", g, p, r.Guards)
					}
					if right == Read && r.Refused(p, false) {
						t.Fatalf("grant %v covers %s, whose reads the rules refuse (%v)", g, p, r.Guards)
					}
				}
			}
			for _, c := range chains {
				if r.Refused(c.Path, true) {
					t.Fatalf("chain %s is not writable (%v)", c.Path, r.Guards)
				}
				if c.Reads && !reads {
					t.Fatalf("a chain of the reads, and reads are not restricted: %v", c)
				}
				if !r.Refused(p, !c.Reads) || !within(p, c.Path) || p == c.Path {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(p, c.Path+"/"), "/")
				if !slices.Contains(c.Protected, name) {
					t.Fatalf("chain %v: %s is refused, and its name %q is not protected (%v)", c, p, name, r.Guards)
				}
			}
		}
		// Guards that do not exist count too (a later guard at the same
		// path wins, as in Compute).
		last := map[string]byte{}
		for _, g := range r.Guards {
			last[g.Path] = g.View
		}
		for path, view := range last {
			g := initstage.Guard{Path: path, View: view}
			for _, c := range chains {
				refused := g.View != initstage.ViewWritable
				if c.Reads {
					refused = g.View == initstage.ViewHidden
				}
				if !refused || !within(g.Path, c.Path) || g.Path == c.Path {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(g.Path, c.Path+"/"), "/")
				if !slices.Contains(c.Protected, name) {
					t.Fatalf("chain %v: guard %v, and its name %q is not protected", c, g, name)
				}
			}
		}
	})
}
