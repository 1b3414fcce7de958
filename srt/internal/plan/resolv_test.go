package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
)

func TestResolvConf(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   map[string]string
		want string // where it is bound; "" with a warning
		same bool   // "" without one: the file says it already
	}{
		{"file", map[string]string{"/etc/resolv.conf": "file"}, "/etc/resolv.conf", false},
		{"absolute link", map[string]string{"/etc/resolv.conf": "-> /run/resolvconf/resolv.conf", "/run/resolvconf/resolv.conf": "file"}, "/run/resolvconf/resolv.conf", false},
		{"relative link through a linked dir", map[string]string{"/etc/resolv.conf": "-> ../var/run/stub.conf", "/var/run": "-> ../run", "/run/stub.conf": "file"}, "/run/stub.conf", false},
		{"dangling link", map[string]string{"/etc/resolv.conf": "-> /run/systemd/resolve/stub-resolv.conf"}, "", false},
		{"missing", map[string]string{"/etc/passwd": "file"}, "", false},
		{"loop", map[string]string{"/etc/resolv.conf": "-> /etc/a", "/etc/a": "-> /etc/resolv.conf"}, "", false},
		{"directory", map[string]string{"/etc/resolv.conf": "dir"}, "", false},
		{"already the sandbox's (nested)", map[string]string{"/etc/resolv.conf": "text nameserver 127.0.0.53\n"}, "", true},
		{"another resolver", map[string]string{"/etc/resolv.conf": "text nameserver 10.0.0.1\n"}, "/etc/resolv.conf", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Build(Input{Config: bareConfig(t), FS: fsview.NewMem(c.fs), Cwd: "/", Home: "/root", Command: []string{"true"}, Network: &Network{ResolvConf: "nameserver 127.0.0.53\n", Capture: true}})
			if err != nil {
				t.Fatal(err)
			}
			if p.ResolvConf != c.want {
				t.Errorf("bound at %q, want %q", p.ResolvConf, c.want)
			}
			warned := slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "resolve names themselves") })
			if warned != (c.want == "" && !c.same) {
				t.Errorf("warning %v, want %v: %q", warned, c.want == "", p.Warnings)
			}
			opts, _ := p.BwrapArgs("/init", 0)
			if slices.Contains(opts, "--unshare-net") {
				t.Error("bubblewrap makes its own network namespace, not joining srt's")
			}
			if i := slices.Index(opts, "--ro-bind-data"); (i >= 0) != (c.want != "") || i >= 0 && opts[i+2] != c.want {
				t.Errorf("options: %q", opts)
			}
		})
	}
}
