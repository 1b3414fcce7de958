package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/settingsfile"
)

// runDecider runs the decider to its end with descriptors 3 and 4 open
// (one end of a socket pair each) and returns its stdout, stderr and exit
// code.
func runDecider(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	a, b := socketPair(t)
	c, d := socketPair(t)
	defer a.Close()
	defer b.Close()
	defer c.Close()
	defer d.Close()
	cmd := exec.Command(deciderBin, args...)
	cmd.ExtraFiles = []*os.File{a, c}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// A usage error says what is wrong on stderr, writes nothing on stdout
// (which can be the stream to srt-proxy) and exits 2.
func TestUsageErrors(t *testing.T) {
	f := writeSettings(t, `{"network": {"allowedDomains": [], "deniedDomains": []}}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "decider: --settings FILE is required (srt starts the decider with --proxy-fd and --control-fd instead)\n"},
		{[]string{"--bogus"}, "decider: flag provided but not defined: -bogus\nRun 'decider --help' for usage.\n"},
		{[]string{"-x", "--settings", f}, "decider: flag provided but not defined: -x\nRun 'decider --help' for usage.\n"},
		{[]string{"--settings"}, "decider: flag needs an argument: -settings\nRun 'decider --help' for usage.\n"},
		{[]string{"--settings", ""}, "decider: --settings needs a file\n"},
		{[]string{"--settings", f, "extra"}, `decider: unexpected argument "extra": the decider takes options only` + "\n"},
		{[]string{"--settings", f, "--control-fd", "4"}, "decider: --settings and --control-fd cannot be used together: with --control-fd srt sends the settings\n"},
		{[]string{"--settings", f, "--framing", "length"}, "decider: --framing is for srt's mode; on its own the decider speaks line framing, srt-proxy's default --decider-framing\n"},
		{[]string{"--settings", f, "--log-format", "xml"}, `decider: --log-format must be text or json (got "xml")` + "\n"},
		{[]string{"--settings", f, "--proxy-fd", "x"}, `decider: --proxy-fd needs a descriptor number (got "x")` + "\n"},
		{[]string{"--settings", f, "--proxy-fd", "-1"}, `decider: --proxy-fd needs a descriptor number (got "-1")` + "\n"},
		{[]string{"--settings", f, "--proxy-fd", "99"}, "decider: --proxy-fd 99: bad file descriptor\n"},
		{[]string{"--proxy-fd", "3"}, "decider: --proxy-fd and --control-fd are required\n"},
		{[]string{"--control-fd", "4"}, "decider: --proxy-fd and --control-fd are required\n"},
		{[]string{"--proxy-fd", "3", "--control-fd", "9"}, "decider: --control-fd 9: bad file descriptor\n"},
		{[]string{"--proxy-fd", "3", "--control-fd", "4", "--framing", "bytes"}, `decider: --framing must be line or length (got "bytes")` + "\n"},
		{[]string{"--proxy-fd", "3", "--control-fd", "4", "--log-format", "json"}, "decider: --log-format is for the decider on its own (--settings); in srt's mode -d logs on srt's stderr\n"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stdout, stderr, code := runDecider(t, c.args...)
			if code != 2 || stderr != c.want || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q\nwant exit 2, stderr %q, no stdout", code, stderr, stdout, c.want)
			}
		})
	}
}

// A descriptor option names a descriptor the decider inherited. Numbers 3
// and 4, closed when it starts, are soon the Go runtime's (it keeps its
// cgroup CPU limit files open from before main): the decider must refuse
// them as it refuses any closed number, not read the runtime's file as
// srt-proxy's stream ("stopped (proxy: frame is not one JSON object)").
func TestDescriptorNotInherited(t *testing.T) {
	f := writeSettings(t, `{"network": {"allowedDomains": [], "deniedDomains": []}}`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--settings", f, "--proxy-fd", "3"}, "decider: --proxy-fd 3: bad file descriptor\n"},
		{[]string{"--settings", f, "--proxy-fd", "4"}, "decider: --proxy-fd 4: bad file descriptor\n"},
		{[]string{"--proxy-fd", "3", "--control-fd", "4"}, "decider: --proxy-fd 3: bad file descriptor\n"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := exec.Command(deciderBin, c.args...) // nothing but stdio
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 || stderr.String() != c.want || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q\nwant exit 2, stderr %q, no stdout", code, stderr.String(), stdout.String(), c.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		stdout, stderr, code := runDecider(t, arg)
		if code != 0 || stderr != "" || !has(stdout, "decider --settings FILE", "--proxy-fd FD", "--log-format", "--control-fd FD") {
			t.Errorf("%s: exit %d, stderr %q, stdout %q", arg, code, stderr, stdout)
		}
	}
}

// A settings file that cannot be used stops the decider at the start, with
// srt's wording and the key at fault (exit 1); nothing reaches stdout.
func TestBadSettings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	invalid := file("invalid.json", `{"filesystem": {}, "network": {"allowedDomains": ["*.com", "ok.example"], "deniedDomains": [1], "deniedDomainReasons": {"x.example": ""}, "deniedResolvedAddresses": ["10.0.0.0/40"], "tlsTerminate": {}, "alowedDomains": []}}`)
	for _, c := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.json"), filepath.Join(dir, "none.json") + " does not exist."},
		{"a directory", dir, dir + " could not be read (EISDIR)."},
		{"empty", file("empty.json", " \n"), filepath.Join(dir, "empty.json") + ` is empty. Put the network block in it: {"network": {"allowedDomains": […], "deniedDomains": […]}}.`},
		{"not JSON", file("x.json", `{"network": x}`), filepath.Join(dir, "x.json") + " is not valid JSON: invalid character 'x' looking for beginning of value at offset 10"},
		{"duplicate key", file("dup.json", `{"network": {}, "network": {}}`), filepath.Join(dir, "dup.json") + ` is not valid JSON: duplicate key "network" at offset 14`},
		{"invalid", invalid, invalid + " does not hold a valid config — " + strings.Join([]string{
			`filesystem: is not a setting of the decider, whose settings hold the "network" block alone (srt's other settings are for its sandbox); remove it from the decider's settings`,
			`network.allowedDomains.0: "*.com" is too broad: a wildcard needs two labels or more after "*." ("*.example.com"). ` + settingsfile.AllowPatternMessage,
			"network.deniedDomains.0: Expected string, received number",
			"network.deniedDomainReasons.x.example: String must contain at least 1 character(s)",
			`network.deniedResolvedAddresses.0: Invalid IP address or CIDR range. Use an IPv4/IPv6 literal or CIDR, e.g. "10.0.0.0/8", "192.168.1.10", "fc00::/7" (IPv6 unbracketed).`,
			"network.tlsTerminate: is not a setting of the decider: srt-proxy run alone terminates TLS with the CA it reads from its option --ca-fd; remove it from the decider's settings",
			`network.alowedDomains: unknown key: srt refuses keys it does not know, so that a misspelt setting cannot silently drop a rule; did you mean "allowedDomains"?`,
		}, "; ")},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runDecider(t, "--settings", c.path)
			if want := "decider: " + c.want + "\n"; code != 1 || stderr != want || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q\nwant exit 1, stderr %q", code, stderr, stdout, want)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		stdout, stderr, code := runDecider(t, "--settings", filepath.Join(dir, "none.json"), "--log-format", "json")
		if want := `{"level":"error","time":`; code != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, `,"message":"`+filepath.Join(dir, "none.json")+` does not exist."}`+"\n") || stdout != "" {
			t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, stdout)
		}
	})
}
