package plan

import (
	"path/filepath"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/initstage"
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
