package seatbelt

import (
	"flag"
	"strings"
	"testing"

	"github.com/srt-sandbox/srt/internal/fsview"
	"github.com/srt-sandbox/srt/internal/goldenfile"
	"github.com/srt-sandbox/srt/settings"
)

// Regenerate the golden files with `go test ./srt/internal/seatbelt
// -update` only when a profile change is intended; review the diff of
// testdata/ as the change itself: every line is a permission a macOS
// sandbox will (or will no longer) have.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// macHost is the filesystem every golden case runs against: a Mac's
// layout.
func macHost() *fsview.Mem {
	return fsview.NewMem(map[string]string{
		"/Users/u/.ssh/id_ed25519":           "file",
		"/Users/u/.ssh/known_hosts":          "file",
		"/Users/u/.aws/credentials":          "file",
		"/Users/u/proj/.git/HEAD":            "file",
		"/Users/u/proj/.git/config":          "file",
		"/Users/u/proj/src/main.go":          "file",
		"/Users/u/proj/.env":                 "file",
		"/Users/u/repo/.git/HEAD":            "file",
		"/Users/u/repo/pkg/a.go":             "file",
		"/Users/u/[WIP] proj (1)/x":          "file",
		"/Users/u/vault/[v1.2]/key":          "file",
		"/Users/u/ca/ca.key":                 "file",
		"/private/tmp":                       "dir",
		"/tmp":                               "-> private/tmp",
		"/usr/bin/true":                      "file",
		"/Users/u/Library/Preferences/x.pli": "file",
	}).Own("/Users/u", 501, 20)
}

const token = "0123456789abcdef0123456789abcdef"

// goldenCase is a settings file and the changes to the command's host.
type goldenCase struct {
	name, settings string
	env            func(e *Env)
}

// goldenCases are the representative settings whose profiles are pinned.
var goldenCases = []goldenCase{
	{name: "defaults", settings: `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`},
	{name: "typical", settings: `{"network":{"allowedDomains":["github.com"],"deniedDomains":[]},
		"filesystem":{"denyRead":["~/.ssh","~/.aws","**/*.pem",".env"],"allowRead":["~/.ssh/known_hosts"],"allowWrite":[".","/tmp/build"],"denyWrite":["deploy.sh","src/*.lock"]}}`},
	{name: "disabled", settings: `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"disabled":true,"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]}}`,
		env: func(e *Env) { e.SettingsFiles = []string{"/Users/u/.srt-settings.json"} }},
	{name: "network-options", settings: `{"network":{"allowedDomains":[],"deniedDomains":[],"allowLocalBinding":true,"allowAllUnixSockets":true,"allowMachLookup":["com.apple.coreaudio.*","org.example.agent"]},
		"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"enableWeakerNetworkIsolation":true,"allowAppleEvents":true,"allowPty":true}`},
	{name: "unix-sockets", settings: `{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":["/var/run/docker.sock","~/.colima/","/private/tmp/sockets"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`},
	{name: "credentials", settings: `{"network":{"allowedDomains":["api.example.com"],"deniedDomains":[],"tlsTerminate":{"caCertPath":"/Users/u/ca/ca.crt","caKeyPath":"/Users/u/ca/ca.key"}},
		"filesystem":{"denyRead":[],"allowRead":["~"],"allowWrite":["."],"denyWrite":[]},
		"credentials":{"files":[{"path":"~/.aws/credentials","mode":"deny"},{"path":"~/.netrc","mode":"mask"}],"envVars":[{"name":"GITHUB_TOKEN","mode":"deny"},{"name":"NPM_TOKEN","mode":"mask"}]}}`,
		env: func(e *Env) {
			e.MaskedFiles = []string{"/Users/u/.netrc"}
			e.CAKey = "/Users/u/ca/ca.key"
			e.Environ = append(e.Environ, "GITHUB_TOKEN=ghp_x", "NPM_TOKEN=npm_x")
		}},
	{name: "brackets-in-cwd", settings: `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["secrets/*.key","~/vault/[v1.2]/*"],"allowWrite":["."],"denyWrite":["[ab]?.txt"]}}`,
		env: func(e *Env) { e.Cwd = "/Users/u/[WIP] proj (1)" }},
	{name: "enclosing-repo-allow-git-config", settings: `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["~/repo"],"denyWrite":[],"allowGitConfig":true}}`,
		env: func(e *Env) { e.Cwd = "/Users/u/repo/pkg" }},
	{name: "deny-root", settings: `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["/","~/proj/.env"],"allowRead":["/usr","/System","/Library","~/proj","/private/tmp"],"allowWrite":["~/proj"],"denyWrite":[]}}`},
	{name: "environment", settings: `{"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":8080},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},
		"environment":{"allow":["PATH","HOME","LANG","LC_*"]},"git":{"safeDirectories":["~/proj","/srv/repo/"]}}`,
		env: func(e *Env) {
			e.HTTPExternal = true
			e.TmpDir = "/private/tmp/srt-501-abc"
			e.Environ = append(e.Environ, "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x", "JAVA_TOOL_OPTIONS=-Xmx1g")
		}},
}

// profileOf generates the profile of a golden case.
func profileOf(t *testing.T, c goldenCase) *Profile {
	t.Helper()
	cfg, err := settings.Parse([]byte(c.settings))
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Command: "npm test", Cwd: "/Users/u/proj", Home: "/Users/u",
		Environ:  []string{"PATH=/usr/bin:/bin", "HOME=/Users/u", "LANG=en_US.UTF-8"},
		HTTPPort: 3128, SOCKSPort: 1080, ProxyToken: token, Nonce: "golden", FS: macHost()}
	if c.env != nil {
		c.env(&env)
	}
	return mustGenerate(t, cfg, env)
}

// mustGenerate resolves cfg for env and generates its profile.
func mustGenerate(t *testing.T, cfg *settings.Config, env Env) *Profile {
	t.Helper()
	in, err := FromSettings(cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			p := profileOf(t, c)
			if _, err := parseSBPL(p.SBPL); err != nil {
				t.Fatalf("the profile does not read back: %v", err)
			}
			// The proxy password is in the environment only, never in
			// the argv (which every process of the host can read).
			if strings.Contains(strings.Join(p.Argv, "\x00"), token) {
				t.Errorf("the argv holds the proxy token")
			}
			golden(t, c.name, render(p))
		})
	}
}

// render is a profile as its golden file shows it: the SBPL, the argv
// around it, the environment changes and the warnings (the proxy token
// replaced).
func render(p *Profile) string {
	var b strings.Builder
	b.WriteString(p.SBPL)
	b.WriteString("\n;; argv: ")
	b.WriteString(strings.Join(append([]string{p.Argv[0], p.Argv[1], "<profile>"}, p.Argv[3:]...), " | "))
	b.WriteString("\n")
	for _, n := range p.Unset {
		b.WriteString(";; env -u " + n + "\n")
	}
	for _, op := range p.Set {
		b.WriteString(";; env " + op.Name + "=" + op.Value + "\n")
	}
	for _, w := range p.Warnings {
		b.WriteString(";; warning: " + w + "\n")
	}
	return strings.ReplaceAll(b.String(), token, "<token>")
}

// golden compares got with testdata/<name>.golden (rewritten under
// -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, "profile", name, got, *update)
}
