//go:build linux

package e2e

import (
	"os"
	"testing"
)

func TestSettingsFileErrors(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		expect(t, w.srt("-s", "/does/not/exist", "true"), 1,
			"srt: /does/not/exist does not exist.",
			"Refusing to run with the built-in defaults, which would drop the rules --settings asked for.")
		empty := w.write("empty.json", "  \n")
		expect(t, w.srt("-s", empty, "true"), 1, "srt: "+empty+" is empty. Delete it, or put a config in it.",
			"Refusing to run with the built-in defaults, which would drop this file's rules")
		bad := w.write("bad.json", "{bad")
		expect(t, w.srt("-s", bad, "true"), 1, "srt: "+bad+" is not valid JSON:")
		incomplete := w.write("incomplete.json", `{"network":{}}`)
		expect(t, w.srt("-s", incomplete, "true"), 1, "srt: "+incomplete+" does not hold a valid config — network.allowedDomains: Required; network.deniedDomains: Required; filesystem: Required")
		typo := w.write("typo.json", `{"network":{"allowedDomains":[],"deniedDomains":["*.com"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWite":[]}}`)
		expect(t, w.srt("-s", typo, "true"), 1, `network.deniedDomains.0: "*.com" is too broad: a wildcard needs two labels or more after "*." ("*.example.com"). Invalid domain pattern.`,
			`filesystem.denyWite: unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule; did you mean "denyWrite"?`,
			"filesystem.denyWrite: Required")
		// Each bad pattern says which rule it broke (issue 14, item 7),
		// and a section's key at the top level where it belongs.
		patterns := w.write("patterns.json", `{"allowedDomains":[],"network":{"allowedDomains":["127.1","bücher.de","example.com:0"],"deniedDomains":["10.0.0.0/8"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
		expect(t, w.srt("-s", patterns, "true"), 1,
			`allowedDomains: unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule; did you mean "network.allowedDomains"?`,
			`network.allowedDomains.0: "127.1" is the IPv4 address 127.0.0.1 in shorthand (a name whose last label is a number is read as an address): write "127.0.0.1";`,
			`network.allowedDomains.1: "bücher.de" has non-ASCII characters: write the name in its ASCII form, "xn--…"`,
			`network.allowedDomains.2: "example.com:0" has port 0: a port is 1-65535; drop ":0" to cover every port. Invalid domain pattern.`,
			`network.deniedDomains.0: "10.0.0.0/8" is an address range: these lists name single addresses; to refuse every address of a range, put it in network.deniedResolvedAddresses. Invalid domain pattern.`)
		dir := w.mkdir("adir.json")
		expect(t, w.srt("-s", dir, "true"), 1, "srt: "+dir+" could not be read (EISDIR).")
		// The default file, when present, is used; when broken, refused.
		w.write("home/.srt-settings.json", "{")
		expect(t, w.srt("true"), 1, ".srt-settings.json is not valid JSON")
		os.Remove(w.path("home/.srt-settings.json"))
		expect(t, w.srt("true"), 0)
	})
}

func TestIgnoredSettingsAreAcceptedWithDebugLine(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowMachLookup":["com.x"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"ripgrep":{"command":"rg"},"allowPty":true}`)
		expect(t, w.srt("-d", "-s", s, "true"), 0, "network.allowMachLookup (macOS only", "ripgrep (configures the reference's ripgrep", "allowPty (macOS only)")
	})
}

// TestMissingPathsWarned (issue 14, item 9): allowWrite and denyRead
// entries naming paths that do not exist said nothing without -d, so a
// typo in allowWrite showed only as "Read-only file system". Now each list
// with such entries gets one warning on stderr, stdout stays the
// command's, and the command runs. The control: with the paths made, no
// warning.
func TestMissingPathsWarned(t *testing.T) {
	forEach(t, func(t *testing.T, w *workspace) {
		s := w.settings(fsSettings(`{"denyRead":["~/.asw"],"allowWrite":["./buidl"],"denyWrite":[]}`))
		r := w.srt("-s", s, "-c", "echo out; echo x > buidl")
		expect(t, r, 1, "out\n", refusedText("EROFS"),
			`srt: warning: filesystem.allowWrite names paths that do not exist, so they grant nothing; make them before srt starts (a path made later stays read-only in the sandbox), or correct the entries: "./buidl" (`+w.dir+`/buidl)`,
			`srt: warning: filesystem.denyRead names paths that do not exist, so they hide nothing; a path made while the sandbox runs is readable in it, so correct an entry with a typo: "~/.asw" (`+w.home+`/.asw)`)
		if r.stdout != "out\n" {
			t.Errorf("stdout holds more than the command's output: %q", r.stdout)
		}
		w.mkdir("home/proj/buidl")
		w.mkdir("home/.asw")
		r = w.srt("-s", s, "-c", "echo x > buidl/f && echo WROTE")
		expect(t, r, 0, "WROTE")
		expect(t, r, 0, "!do not exist")
	})
}
