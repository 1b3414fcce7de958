//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	// Anywhere on the line, whatever else is there: nothing else happens.
	for _, args := range [][]string{{"--version"}, {"--bogus", "--version", "--decider-fd", "99"}} {
		cmd := exec.Command(binary, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if stdout.String() != "srt-proxy 0.1.0\n" || stderr.Len() != 0 {
			t.Errorf("%v: stdout %q stderr %q", args, stdout.String(), stderr.String())
		}
	}
}

// TestHelp: -h and --help, wherever they are, print proxy-only mode's
// options on stdout, each with one default at most, and none of srt's
// mode, which proxy-only mode refuses (issue 14: every option showed
// "(default: …)" after its own default, and srt's mode's were listed).
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--bogus", "--help"}, {"--listen", "x", "-h"}} {
		cmd := exec.Command(binary, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() != 0 {
			t.Fatalf("%v: %v, stderr %q", args, err, stderr.String())
		}
		help := stdout.String()
		for _, o := range options {
			listed := strings.Contains(help, "  "+o.name+" ") || strings.Contains(help, ", "+o.name+" ") || strings.Contains(help, o.name+"\n")
			if listed != (o.usage != "") {
				t.Errorf("%v: %s listed: %v", args, o.name, listed)
			}
		}
		for _, bad := range []string{"(default:", "  --srt-mode", "--tls-terminate", "--max-tunnels", "GLOBAL OPTIONS"} {
			if strings.Contains(help, bad) {
				t.Errorf("%v: the help holds %q:\n%s", args, bad, help)
			}
		}
		if strings.Count(help, "default") != 2 { // --decider-framing's, --verdict-timeout's
			t.Errorf("%v: %d defaults:\n%s", args, strings.Count(help, "default"), help)
		}
		for _, line := range strings.Split(help, "\n") {
			if len(line) > helpWidth {
				t.Errorf("%v: a line of %d columns: %q", args, len(line), line)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	notLoopback := func(v string) string {
		return `srt proxy: --listen "` + v + `" is not a loopback address (127.0.0.0/8, [::1] or localhost); pass --listen-any-interface to bind it anyway`
	}
	badPort := func(v string) string {
		return `srt proxy: --listen needs <host:port> with a port from 0 to 65535 (got "` + v + `")`
	}
	const noDecider = "srt proxy: a decider is required (--decider-fd, or --decider-in and --decider-out)"
	tests := []struct {
		args []string
		want string
	}{
		{nil, noDecider},
		{[]string{"--listen", "127.0.0.1:0"}, noDecider},
		{[]string{"--decider-in", "3", "--listen", "127.0.0.1:0"}, noDecider},
		{[]string{"--decider-out", "3", "--listen", "127.0.0.1:0"}, noDecider},
		{[]string{"--decider-fd", "3"}, "srt proxy: --listen-fd (or --listen for development) is required"},
		{[]string{"--decider-fd", "3", "--listen", "1.2.3.4:80"}, notLoopback("1.2.3.4:80")},
		{[]string{"--decider-fd", "3", "--listen", ":80"}, notLoopback(":80")},
		{[]string{"--decider-fd", "3", "--listen", "[::2]:80"}, notLoopback("[::2]:80")},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1.example:80"}, notLoopback("127.0.0.1.example:80")},
		{[]string{"--decider-fd", "3", "--listen", "localhost:99999"}, badPort("localhost:99999")},
		{[]string{"--decider-fd", "3", "--listen", "localhost"}, badPort("localhost")},
		{[]string{"--decider-fd", "3", "--listen", "localhost:-1"}, badPort("localhost:-1")},
		{[]string{"--decider-fd", "3", "--listen", "localhost:"}, badPort("localhost:")},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--metrics-listen", "10.1.2.3:9464"}, `srt proxy: --metrics-listen "10.1.2.3:9464" is not a loopback address (127.0.0.0/8, [::1] or localhost); pass --listen-any-interface to bind it anyway`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--metrics-listen", "localhost"}, `srt proxy: --metrics-listen needs <host:port> with a port from 0 to 65535 (got "localhost")`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--decider-framing", "xml"}, `srt proxy: --decider-framing must be line or length (got "xml")`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--verdict-timeout", "0s"}, "srt proxy: --verdict-timeout must be more than 0"},
		{[]string{"--decider-fd", "x", "--listen", "127.0.0.1:0"}, `srt proxy: --decider-fd needs a descriptor number (got "x")`},
		{[]string{"--decider-fd", "3", "--listen-fd", "-1"}, `srt proxy: --listen-fd needs a descriptor number (got "-1")`},
		{[]string{"--decider-fd", "3", "--lifeline-fd", "4x", "--listen", "127.0.0.1:0"}, `srt proxy: --lifeline-fd needs a descriptor number (got "4x")`},
		{[]string{"--decider-fd", "9", "--listen", "127.0.0.1:0"}, "srt proxy: --decider-fd 9: bad file descriptor"},
		{[]string{"--decider-fd", "3", "--listen-fd", "3"}, "srt proxy: descriptor 3 is given twice (--decider-fd and --listen-fd)"},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "extra"}, `srt proxy: unexpected argument "extra"`},
		{[]string{"--bogus"}, "error: unknown option '--bogus'"},
		{[]string{"-d", "--bogus=1"}, "error: unknown option '--bogus=1'"},
		{[]string{"--debug=1"}, "error: unknown option '--debug=1'"},
		{[]string{"--listen"}, "error: option '--listen <host:port>' argument missing"},
		{[]string{"--decider-fd"}, "error: option '--decider-fd <fd>' argument missing"},
		{[]string{"--strip-response-header"}, "error: option '--strip-response-header <name...>' argument missing"},
		{[]string{"--strip-response-header", "--debug"}, "error: option '--strip-response-header <name...>' argument missing"},
		// Typed values are checked before the parser sees them: it would
		// print the whole help on stdout.
		{[]string{"--verdict-timeout", "x"}, `srt proxy: --verdict-timeout needs a duration such as 5s or 500ms (got "x")`},
		{[]string{"--verdict-timeout=5"}, `srt proxy: --verdict-timeout needs a duration such as 5s or 500ms (got "5")`},
		{[]string{"--srt-mode", "--max-tunnels", "many"}, `srt proxy: --max-tunnels needs a whole number (got "many")`},
		{[]string{"--srt-mode", "--handshake-timeout", "1"}, `srt proxy: --handshake-timeout needs a duration such as 5s or 500ms (got "1")`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--sigv4a", "allow"}, `srt proxy: --sigv4a must be deny or passthrough (got "allow")`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--sigv4-presigned=Passthrough"}, `srt proxy: --sigv4-presigned must be deny or passthrough (got "Passthrough")`},
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--sigv4-streaming", ""}, `srt proxy: --sigv4-streaming must be deny or passthrough (got "")`},
		{[]string{"--plaintext-inject=1"}, "error: unknown option '--plaintext-inject=1'"},
		{[]string{"--sigv4a"}, "error: option '--sigv4a <deny|passthrough>' argument missing"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...)
			cmd.ExtraFiles = []*os.File{r} // fd 3 is open
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d (%v), want 2", code, err)
			}
			// A short message and the hint, never the help.
			if got := strings.TrimSuffix(stderr.String(), "\n"); got != tt.want+"\n"+usageHint {
				t.Errorf("stderr %q\nwant   %q", got, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}

// A descriptor option names a descriptor srt-proxy inherited. Numbers 3
// and 4, closed when it starts, are soon the Go runtime's (it keeps its
// cgroup CPU limit files open from before main), and later ones its
// poller's: srt-proxy must refuse them as it refuses any closed number,
// not take the runtime's file for the decider ("stopped (decider: write
// error: write decider: bad file descriptor)", exit 0).
func TestDescriptorNotInherited(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--decider-fd", "3", "--listen", "127.0.0.1:0"}, "srt proxy: --decider-fd 3: bad file descriptor"},
		{[]string{"--decider-fd", "4", "--listen", "127.0.0.1:0"}, "srt proxy: --decider-fd 4: bad file descriptor"},
		{[]string{"--decider-in", "3", "--decider-out", "4", "--listen", "127.0.0.1:0"}, "srt proxy: --decider-in 3: bad file descriptor"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...) // nothing but stdio
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", code, stderr.String())
			}
			if got := strings.TrimSuffix(stderr.String(), "\n"); got != tt.want+"\n"+usageHint {
				t.Errorf("stderr %q\nwant   %q", got, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
}

func TestCAUsageErrors(t *testing.T) {
	for name, pem := range map[string]string{
		"empty":     "",
		"key only":  "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
		"cert only": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"ec key":    "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
	} {
		t.Run(name, func(t *testing.T) {
			mine, theirs := socketPair(t)
			defer mine.Close()
			caR, caW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			caW.WriteString(pem)
			caW.Close()
			p := spawn(t, []string{"--decider-fd", "3", "--listen", "127.0.0.1:0", "--ca-fd", "4"}, []*os.File{theirs, caR}, nil)
			caR.Close()
			code, rest := p.exit()
			if want := "srt proxy: proxy-only: the CA PEM needs a private key and a certificate"; code != 2 || rest != want {
				t.Fatalf("exit %d, stderr %q", code, rest)
			}
		})
	}
}
