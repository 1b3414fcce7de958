package refdiff

import "strings"

// refDiffCase is one settings file and the host it is used on. Paths in
// files are relative to the case's directory, which holds home/ (HOME)
// and home/proj/ (the working directory; work/ with cwdOutsideHome); a
// trailing "/" makes a directory.
type refDiffCase struct {
	name           string
	settings       string
	files          []string
	links          map[string]string // symlink (in the case's directory) → its target
	env            map[string]string
	command        string
	cwdOutsideHome bool
}

// conf writes a settings file: the network and filesystem objects'
// members, and more top-level members.
func conf(network, filesystem string, top ...string) string {
	if network == "" {
		network = `"allowedDomains": [], "deniedDomains": []`
	}
	if filesystem == "" {
		filesystem = `"denyRead": [], "allowWrite": [], "denyWrite": []`
	}
	s := `{"network": {` + network + `}, "filesystem": {` + filesystem + `}`
	for _, t := range top {
		s += ", " + t
	}
	return s + "}"
}

// fsConf is conf with the default network.
func fsConf(filesystem string, top ...string) string { return conf("", filesystem, top...) }

// netConf is conf with extra network members.
func netConf(members string, top ...string) string {
	return conf(`"allowedDomains": ["example.com"], "deniedDomains": [], `+members, "", top...)
}

const noFS = `"denyRead": [], "allowWrite": [], "denyWrite": []`

var cases = []refDiffCase{
	// The defaults and the network.
	{name: "minimal", settings: fsConf(noFS)},
	{name: "allowed-domains", settings: conf(`"allowedDomains": ["example.com", "*.github.com"], "deniedDomains": ["bad.example.com"]`, noFS)},
	{name: "unix-sockets", settings: netConf(`"allowUnixSockets": ["/tmp/srt-refdiff/docker.sock", "~/.ssh/agent.sock", "/tmp/sockets"]`)},
	{name: "unix-socket-through-symlink", settings: netConf(`"allowUnixSockets": ["~/run/agent.sock"]`), files: []string{"home/real-run/"}, links: map[string]string{"home/run": "real-run"}},
	{name: "all-unix-sockets", settings: netConf(`"allowAllUnixSockets": true`)},
	{name: "local-binding", settings: netConf(`"allowLocalBinding": true`)},
	{name: "mach-lookup", settings: netConf(`"allowMachLookup": ["com.example.service", "org.example.helper.*"]`)},
	{name: "mach-lookup-all", settings: netConf(`"allowMachLookup": ["*"]`)},
	{name: "weaker-network-isolation", settings: conf("", noFS, `"enableWeakerNetworkIsolation": true`)},
	{name: "apple-events", settings: fsConf(noFS, `"allowAppleEvents": true`)},
	{name: "pty", settings: fsConf(noFS, `"allowPty": true`)},
	{name: "every-macos-option", settings: conf(`"allowedDomains": ["example.com"], "deniedDomains": [], "allowUnixSockets": ["/tmp/srt-refdiff/x.sock"], "allowLocalBinding": true, "allowMachLookup": ["com.a.b", "com.c.*"]`, noFS,
		`"enableWeakerNetworkIsolation": true`, `"allowAppleEvents": true`, `"allowPty": true`)},

	// Reads: deny, then allow.
	{name: "deny-read-dir", settings: fsConf(`"denyRead": ["~/.ssh"], "allowWrite": [], "denyWrite": []`), files: []string{"home/.ssh/id_rsa"}},
	{name: "deny-read-file", settings: fsConf(`"denyRead": ["~/.netrc"], "allowWrite": [], "denyWrite": []`), files: []string{"home/.netrc"}},
	{name: "deny-read-missing", settings: fsConf(`"denyRead": ["~/not-there", "/nonexistent/dir"], "allowWrite": [], "denyWrite": []`)},
	{name: "deny-read-glob-anywhere", settings: fsConf(`"denyRead": ["~/**/*.pem"], "allowWrite": [], "denyWrite": []`), files: []string{"home/a/b/c.pem"}},
	{name: "deny-read-glob-relative", settings: fsConf(`"denyRead": ["./secrets/*.key", "config/*.env"], "allowWrite": [], "denyWrite": []`), files: []string{"home/proj/secrets/a.key"}},
	{name: "deny-read-glob-classes", settings: fsConf(`"denyRead": ["~/data/file?.txt", "~/data/[ab].txt", "~/data/[0-9]*.csv"], "allowWrite": [], "denyWrite": []`), files: []string{"home/data/file1.txt"}},
	{name: "allow-read-within-home", settings: fsConf(`"denyRead": ["~"], "allowRead": ["~/proj"], "allowWrite": [], "denyWrite": []`)},
	{name: "allow-read-one-file", settings: fsConf(`"denyRead": ["~/.ssh"], "allowRead": ["~/.ssh/known_hosts"], "allowWrite": [], "denyWrite": []`), files: []string{"home/.ssh/known_hosts", "home/.ssh/id_ed25519"}},
	{name: "deny-read-root", settings: fsConf(`"denyRead": ["/"], "allowRead": ["."], "allowWrite": [], "denyWrite": []`)},
	{name: "deny-deeper-than-allow", settings: fsConf(`"denyRead": [".env", "**/*.pem"], "allowRead": ["."], "allowWrite": [], "denyWrite": []`), files: []string{"home/proj/.env"}},
	{name: "allow-read-glob", settings: fsConf(`"denyRead": ["~/secrets"], "allowRead": ["~/secrets/*.pub"], "allowWrite": [], "denyWrite": []`), files: []string{"home/secrets/"}},
	{name: "literal-entries", settings: fsConf(`"denyRead": [{"path": "~/lit/**", "literal": true}, {"path": "~/star*", "literal": true}], "allowWrite": [], "denyWrite": []`), files: []string{"home/lit/"}},

	// Writes: allow-only, denies win, the mandatory denies.
	{name: "write-cwd", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": []`)},
	{name: "write-cwd-deny", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": ["./secret", "build/out"]`), files: []string{"home/proj/secret/"}},
	{name: "write-deny-glob", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": ["**/*.key", "~/.config/**"]`)},
	{name: "write-home-dirs", settings: fsConf(`"denyRead": [], "allowWrite": ["~/cache", "/tmp/build"], "denyWrite": ["~/cache/locked"]`), files: []string{"home/cache/"}},
	{name: "write-deny-above-allow", settings: fsConf(`"denyRead": [], "allowWrite": [".", "~/out"], "denyWrite": ["~"]`)},
	{name: "allow-git-config", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": [], "allowGitConfig": true`), files: []string{"home/proj/.git/hooks/"}},
	{name: "git-repo", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": []`), files: []string{"home/proj/.git/hooks/", "home/proj/.git/config", "home/proj/.git/HEAD"}},
	{name: "git-worktree-file", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": []`), files: []string{"home/proj/.git"}},
	{name: "nested-dangerous", settings: fsConf(`"denyRead": [], "allowWrite": ["."], "denyWrite": []`), files: []string{"home/proj/a/.bashrc", "home/proj/a/.vscode/", "home/proj/a/b/.git/hooks/", "home/proj/a/b/.git/HEAD"}},
	{name: "cwd-outside-home", settings: fsConf(`"denyRead": ["~/.aws"], "allowWrite": [".", "~/.cache"], "denyWrite": []`), cwdOutsideHome: true},
	{name: "filesystem-disabled", settings: fsConf(`"disabled": true, "denyRead": ["~/.ssh"], "allowWrite": [], "denyWrite": []`)},
	{name: "deny-read-hides-default-writes", settings: fsConf(`"denyRead": ["~/.npm", "~/.claude"], "allowWrite": [], "denyWrite": []`)},

	// Strings that must stay strings.
	{name: "special-characters", settings: fsConf(`"denyRead": ["~/with space", "~/quo\"te", "~/back\\slash", "~/zoë/日本", "~/a+b(c)|d^$.x"], "allowWrite": ["./out dir"], "denyWrite": ["./out dir/[x]"]`),
		files: []string{"home/with space/", "home/quo\"te", "home/back\\slash", "home/zoë/日本/", "home/a+b(c)|d^$.x/", "home/proj/out dir/[x]/"}},
	{name: "command-quoting", settings: fsConf(noFS), command: `printf '%s\n' "it's" $HOME; echo "done"`},

	// The environment.
	{name: "credentials-env-deny", settings: fsConf(noFS, `"credentials": {"envVars": [{"name": "SECRET_TOKEN", "mode": "deny"}, {"name": "ABSENT_TOKEN", "mode": "deny"}]}`), env: map[string]string{"SECRET_TOKEN": "s3cr3t", "OTHER": "kept"}},
	{name: "credentials-file-deny", settings: fsConf(noFS, `"credentials": {"files": [{"path": "~/.aws/credentials", "mode": "deny"}, {"path": "~/.config/**/token", "mode": "deny"}]}`), files: []string{"home/.aws/credentials"}},
	{name: "java-options-inherited", settings: fsConf(noFS), env: map[string]string{"JAVA_TOOL_OPTIONS": "-Xmx1g"}},
	{name: "git-safe-directories", settings: fsConf(noFS, `"git": {"safeDirectories": ["/srv/repo", "~/other"]}`)},
}

func init() {
	// Every case name is a directory name and an allow-list key.
	for _, c := range cases {
		if strings.ContainsAny(c.name, "/ |*") {
			panic("bad case name " + c.name)
		}
	}
}
