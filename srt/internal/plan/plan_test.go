package plan

import (
	"flag"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/goldenfile"
	"github.com/srt-sandbox/srt/settings"
)

// Regenerate the golden files with `go test ./srt/internal/plan -update`
// only when a plan change is intended; review the diff of testdata/ as the
// change itself: every line is a mount the sandbox will (or will no longer)
// make.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// host is the filesystem every golden case runs against.
func host() *fsview.Mem {
	return fsview.NewMem(map[string]string{
		"/etc/passwd":                                 "file",
		"/etc/resolv.conf":                            "-> ../run/systemd/resolve/stub-resolv.conf",
		"/run/systemd/resolve/stub-resolv.conf":       "file",
		"/etc/ssh/ssh_config.d/20-systemd.conf":       "file",
		"/usr/bin/bash":                               "file",
		"/usr/local/bin/srt-init":                     "file",
		"/bin":                                        "-> usr/bin",
		"/proc/cpuinfo":                               "file 0444",
		"/proc/1/status":                              "file 0444",
		"/proc/42/oom_score_adj":                      "file 0644",
		"/proc/self":                                  "-> 42",
		"/proc/net":                                   "-> self/net",
		"/proc/sys/kernel/core_pattern":               "file 0644",
		"/proc/sysrq-trigger":                         "file 0200",
		"/proc/pressure/cpu":                          "file 0666",
		"/proc/keys":                                  "file 0444",
		"/proc/kcore":                                 "file 0400",
		"/proc/mtrr":                                  "file 0644",
		"/proc/new-driver/knob":                       "file 0644",
		"/proc/odd-writable":                          "file 0666",
		"/dev/null":                                   "file",
		"/sys/kernel":                                 "dir",
		"/tmp/srt-tmp":                                "dir",
		"/home/u/.ssh/id_rsa":                         "file",
		"/home/u/.bashrc":                             "file",
		"/home/u/.npm/_logs":                          "dir",
		"/home/u/.aws":                                "-> /mnt/secrets/aws",
		"/mnt/secrets/aws/credentials":                "file",
		"/home/u/proj/.git/HEAD":                      "file",
		"/home/u/proj/.git/config":                    "file",
		"/home/u/proj/.git/hooks/pre-commit":          "file",
		"/home/u/proj/src/main.go":                    "file",
		"/home/u/proj/secret.txt":                     "file",
		"/home/u/proj/.env":                           "file",
		"/home/u/proj/a/b/.bashrc":                    "file",
		"/home/u/proj/a/b/c/.bashrc":                  "file",
		"/home/u/proj/a/.vscode/tasks.json":           "file",
		"/home/u/proj/keys/x.pem":                     "file",
		"/home/u/proj/keys/deep/er/y.pem":             "file",
		"/home/u/proj/node_modules/z/.bashrc":         "file",
		"/home/u/proj/sub/.git/HEAD":                  "file",
		"/home/u/proj/link-out":                       "-> /etc",
		"/home/u/proj/locked":                         "unreadable",
		"/home/u/sensitive-folder/notes":              "file",
		"/home/u/proj/list[].ts":                      "file",
		"/home/u/ca/ca.crt":                           "file",
		"/home/u/ca/ca.key":                           "file",
		"/tmp/srt-1000/srt-ca-7-8-x/trust-bundle.crt": "file",
	}).Own("/home/u", 1000, 1000)
}

func TestGolden(t *testing.T) {
	// tls is the input of a command under tlsTerminate with a CA of the
	// settings' own.
	tls := func(in *Input) {
		in.TrustBundle = "/tmp/srt-1000/srt-ca-7-8-x/trust-bundle.crt"
		in.CACert, in.CAKey = "/home/u/ca/ca.crt", "/home/u/ca/ca.key"
	}
	cases := []struct {
		name, settings string
		in             func(*Input)
	}{
		{"defaults", "", nil},
		{"readme-example", `{"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":["~/sensitive-folder"]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"read-deny-allow", `{"filesystem":{"denyRead":["~","secret.txt","**/*.pem",".env"],"allowRead":["."],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"write-deny-above-allow", `{"filesystem":{"denyRead":[],"allowWrite":["/","/home/u/proj"],"denyWrite":["/"]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"write-deny-missing", `{"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":["new/deeper/file","gone.txt","src/main.go","keys/**/*.pem"]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"disabled", `{"filesystem":{"disabled":true,"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"allow-git-config", `{"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[],"allowGitConfig":true},"network":{"allowedDomains":[],"deniedDomains":[]},"mandatoryDenySearchDepth":1}`, nil},
		// requireLandlock reaches the init stage, which refuses to start
		// the command on a kernel without Landlock.
		{"require-landlock", `{"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]},"requireLandlock":true}`, nil},
		{"deny-root", `{"filesystem":{"denyRead":["/"],"allowRead":["/usr","/etc","~/proj"],"allowWrite":["~/proj/src"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"credential-file-deny", `{"filesystem":{"denyRead":[],"allowRead":["~/.aws"],"allowWrite":["~"],"denyWrite":[]},"credentials":{"files":[{"path":"~/.aws/credentials","mode":"deny"},{"path":"~/.ssh","mode":"deny"}],"envVars":[{"name":"GITHUB_TOKEN","mode":"deny"}]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"literal-and-patterns", `{"filesystem":{"denyRead":[{"path":"list[].ts","literal":true},"/**/*.pem","locked/**/*.key"],"allowWrite":["src/*"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"network", `{"filesystem":{"denyRead":["/usr"],"allowRead":["/usr/bin"],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`, nil},
		{"git-safe-directories", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"git":{"safeDirectories":["~/proj","/"]},"network":{"allowedDomains":[],"deniedDomains":[]},"enableWeakerNestedSandbox":true,"allowNestedUserNamespaces":true}`, nil},
		// The bundle is bound at its fixed path even under a denyRead of
		// "/"; the CA's certificate is re-opened, its key hidden though an
		// allowRead covers it.
		{"tls-terminate", `{"filesystem":{"denyRead":["/"],"allowRead":["~"],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{"caCertPath":"/home/u/ca/ca.crt","caKeyPath":"/home/u/ca/ca.key"}}}`, tls},
		{"tls-terminate-fs-disabled", `{"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{"caCertPath":"/home/u/ca/ca.crt","caKeyPath":"/home/u/ca/ca.key"}}}`, tls},
		// network.httpProxyPort, socksProxyPort: a port relayed to an
		// external proxy gets no credentials, the other keeps srt's.
		{"external-http-proxy", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":8080}}`,
			func(in *Input) { in.Proxy.HTTPExternal = true }},
		{"external-socks-proxy", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"socksProxyPort":1081}}`,
			func(in *Input) { in.Proxy.SOCKSExternal = true }},
		// Both: srt generates no token at all.
		{"external-proxies", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":8080,"socksProxyPort":1081}}`,
			func(in *Input) { in.Proxy.HTTPExternal, in.Proxy.SOCKSExternal, in.Proxy.Token = true, true, "" }},
		// srt's state directory stays read-only under an allowWrite that
		// covers it, and under filesystem.disabled; /tmp is pinned above
		// it, and the trust bundle in it is still bound at its fixed path.
		{"state-dir-allow-write", `{"filesystem":{"denyRead":[],"allowWrite":["/tmp"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}}}`,
			func(in *Input) {
				in.StateDir, in.TrustBundle = "/tmp/srt-1000", "/tmp/srt-1000/srt-ca-7-8-x/trust-bundle.crt"
			}},
		{"state-dir-fs-disabled", `{"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`,
			func(in *Input) { in.StateDir = "/tmp/srt-1000" }},
		// The kernel's files (kernel.go): as root every global /proc entry
		// is covered and /sys is read-only under a writable root; a write
		// grant under /proc or /sys grants nothing.
		{"kernel-root", `{"filesystem":{"denyRead":[],"allowWrite":["/","/sys/kernel","/proc/sys"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`,
			func(in *Input) { in.UID = 0 }},
		{"kernel-root-weaker-nested", `{"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]},"enableWeakerNestedSandbox":true}`,
			func(in *Input) { in.UID = 0 }},
		// allowNestedUserNamespaces as a user: /proc stays uncovered, so a
		// nested sandbox can mount a fresh one.
		{"kernel-nested-user", `{"filesystem":{"denyRead":[],"allowWrite":["/"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]},"allowNestedUserNamespaces":true}`, nil},
		// srt's settings files: the existing one read-only, the missing
		// default one a placeholder, under allowWrite and under
		// filesystem.disabled alike.
		{"settings-files", `{"filesystem":{"denyRead":[],"allowWrite":["~"],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`,
			func(in *Input) { in.SettingsFiles = []string{"/home/u/.srt-settings.json", "/home/u/proj/src/main.go"} }},
		{"settings-files-fs-disabled", `{"filesystem":{"disabled":true,"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]}}`,
			func(in *Input) { in.SettingsFiles = []string{"/home/u/.srt-settings.json", "/home/u/proj/src/main.go"} }},
		// Issue 10, items 3, 7, 14, 16, 18, 19, 20, 21: see paths_test.go.
		{"paths-deny-read-pins", fsSettings(`{"denyRead":["config/secrets.env","keys/**/*.pem","config/dir"],"allowWrite":["."],"denyWrite":[]}`), paths},
		{"paths-allow-symlinks", fsSettings(allowSymlinks), paths},
		{"paths-allow-symlinks-root", fsSettings(allowSymlinks), func(in *Input) { paths(in); in.UID = 0 }},
		{"paths-brackets-cwd", fsSettings(`{"denyRead":["**/.env","sub/*"],"allowWrite":[],"denyWrite":[]}`), func(in *Input) { paths(in); in.Cwd = "/home/u/[WIP] project" }},
		{"paths-deny-follows-symlinks", fsSettings(`{"denyRead":["**/.env","~/outside"],"allowRead":["~/outside/deep","**/readme"],"allowWrite":[],"denyWrite":[]}`), paths},
		{"paths-dotdot-after-wildcard", fsSettings(`{"denyRead":["keys/../config/secrets.env"],"allowRead":["k*/../x"],"allowWrite":["*/../keep","[ab]/..","config/../keys"],"denyWrite":[]}`), paths},
		{"paths-deny-crossing", withCredentials(fsSettings(`{"denyRead":["rootlink","up","rootlink/usr","up/*"],"allowWrite":["."],"denyWrite":["rootlink","up/new"]}`), `{"files":[{"path":"up","mode":"deny"}]}`), paths},
		// The environment block: only the allowed names and prefixes of
		// the caller's environment stay (SRT_DEBUG is srt's own), each
		// other variable is unset once; git's count starts from 0, as the
		// inherited one is dropped; a denied variable the list dropped
		// is unset once.
		{"environment-allow", `{"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[]},"environment":{"allow":["PATH","CI_*","TOKEN"]},"git":{"safeDirectories":["~/proj"]},"credentials":{"envVars":[{"name":"SECRET","mode":"deny"}]}}`,
			func(in *Input) {
				in.Env = append(in.Env, "PATH=/usr/bin", "CI_JOB=7", "CI=true", "CIX=1", "TOKEN=t", "TOKENS=u", "SECRET=s", "HOME=/home/u", "HOME=/home/u", "SRT_DEBUG=1")
			}},
		{"tls-terminate-ephemeral", `{"filesystem":{"denyRead":["/tmp"],"allowWrite":[],"denyWrite":[]},"network":{"allowedDomains":[],"deniedDomains":[],"tlsTerminate":{}}}`,
			func(in *Input) { in.TrustBundle = "/tmp/srt-1000/srt-ca-7-8-x/trust-bundle.crt" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := settings.Default()
			if c.settings != "" {
				var err error
				if cfg, err = settings.Parse([]byte(c.settings)); err != nil {
					t.Fatal(err)
				}
			}
			in := Input{
				Config: cfg, FS: host(), Cwd: "/home/u/proj", Home: "/home/u", UID: 1000, TmpDir: PrivateTmp,
				Env: []string{"GIT_CONFIG_COUNT=2"}, Command: []string{"/usr/bin/bash", "-c", "true"},
				Proxy: &Proxy{HTTPPort: 3128, SOCKSPort: 1080, User: "srt.Y21kK3g/eT0=", Token: "0123456789abcdef0123456789abcdef",
					Connect: []string{"/usr/local/bin/srt-init", "--srt-connect=v1"}},
				Network: &Network{ResolvConf: "nameserver 127.0.0.53\n", Capture: true},
				Helpers: []string{"/usr/local/bin/srt-init"},
			}
			if c.in != nil {
				c.in(&in)
			}
			p, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			checkObserveRules(t, p)
			opts, command := p.BwrapArgs("/proc/self/fd/5", 6)
			got := p.String() + "\nbwrap " + strings.Join(opts, " ") + " -- " + strings.Join(command, " ") + "\n"
			golden(t, c.name, got)
		})
	}
}

// golden compares got with testdata/<name>.golden (rewritten under
// -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, "plan", name, got, *update)
}
