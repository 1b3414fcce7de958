package plan

import (
	"path/filepath"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
	"github.com/srt-sandbox/srt/settings"
)

// checkObserveRules holds the observer's rules to Writable and Readable on
// every path p mounts something on, a name beneath each, the paths of the
// golden host and their parents, after a round trip through the memory
// file's encoding. The kernel's covers, the sandbox's own /dev and /proc
// and resolv.conf are left out: Writable does not look at them (the
// observer takes them as read-only, or never refused).
func checkObserveRules(t *testing.T, p *Plan) {
	t.Helper()
	r, err := initstage.DecodeFSRules(p.ObserveRules().Encode())
	if err != nil {
		t.Fatal(err)
	}
	probes := []string{"/", "/etc/passwd", "/usr/bin/bash", "/tmp/x", "/home/u", "/home/u/.bashrc", "/home/u/.ssh/id_rsa",
		"/home/u/proj/.git/hooks/pre-commit", "/home/u/proj/src/main.go", "/home/u/proj/secret.txt", "/home/u/proj/.env",
		"/home/u/proj/keys/deep/er/y.pem", "/home/u/proj/new-file", "/home/u/ca/ca.key", "/mnt/secrets/aws/credentials"}
	for _, m := range p.Mounts {
		probes = append(probes, m.Path, filepath.Join(m.Path, "x"), filepath.Dir(m.Path))
	}
	skip := func(path string) bool {
		if fsview.IsWithin(path, "/dev") || fsview.IsWithin(path, "/proc") || path == p.ResolvConf {
			return true
		}
		for _, m := range p.Kernel {
			if fsview.IsWithin(path, m.Path) {
				return true
			}
		}
		return false
	}
	for _, path := range probes {
		if skip(path) {
			continue
		}
		_, w := p.Writable(path)
		if got := r.Refused(path, true); got == w {
			t.Errorf("observer: a write of %s refused %v, but Writable says %v", path, got, w)
		}
		if got := r.Refused(path, false); got == p.Readable(path) {
			t.Errorf("observer: a read of %s refused %v, but Readable says %v", path, got, p.Readable(path))
		}
	}
}

// TestReadsDenied: the observer watches reads only when the settings hide
// a path from them (a denyRead or credentials.files deny that names an
// existing path, or tlsTerminate's CA key); the kernel's covers and the
// mandatory placeholders, which every plan has, do not count.
func TestReadsDenied(t *testing.T) {
	cases := []struct {
		name, settings string
		in             func(*Input)
		want           bool
	}{
		{"defaults", fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`), nil, false},
		{"deny-write-only", fsSettings(`{"denyRead":[],"allowWrite":["."],"denyWrite":["src"]}`), nil, false},
		{"deny-read-missing", fsSettings(`{"denyRead":["~/no-such-dir"],"allowWrite":[],"denyWrite":[]}`), nil, false},
		{"deny-read", fsSettings(`{"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]}`), nil, true},
		{"deny-read-pattern", fsSettings(`{"denyRead":["**/.env"],"allowWrite":[],"denyWrite":[]}`), nil, true},
		{"deny-root", fsSettings(`{"denyRead":["/"],"allowRead":["/usr"],"allowWrite":[],"denyWrite":[]}`), nil, true},
		{"credential-file", withCredentials(fsSettings(`{"denyRead":[],"allowWrite":[],"denyWrite":[]}`), `{"files":[{"path":"/mnt/secrets/aws/credentials","mode":"deny"}]}`), nil, true},
		{"ca-key", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{"caCertPath":"/home/u/ca/ca.crt","caKeyPath":"/home/u/ca/ca.key"}}}`,
			func(in *Input) { in.CACert, in.CAKey = "/home/u/ca/ca.crt", "/home/u/ca/ca.key" }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := settings.Parse([]byte(c.settings))
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Config: cfg, FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, TmpDir: PrivateTmp,
				Command: []string{"/usr/bin/bash", "-c", "true"}}
			if c.in != nil {
				c.in(&in)
			}
			p, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if !p.ObserveRules().Hides() {
				t.Fatal("the plan hides nothing at all: the case no longer tells the settings' hiding from the kernel's covers")
			}
			if p.ReadsDenied != c.want {
				t.Errorf("ReadsDenied = %v, want %v", p.ReadsDenied, c.want)
			}
		})
	}
}
