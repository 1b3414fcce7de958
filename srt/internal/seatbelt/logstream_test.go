package seatbelt

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/srt-sandbox/decider/srtlink"
)

// The testdata/logstream-*.txt files are `log stream` output in its two
// styles, as macOS writes sandbox denials: the kernel's "Sandbox:
// <process>(<pid>) deny(1) <operation> <target>" and the profile's
// message (the log tag) after it; with a header, macOS's noise, a
// "duplicate reports" summary, another run's nonce and a line of another
// sandbox among them.
func TestParseLogLine(t *testing.T) {
	const nonce = "k3j9x2m1p"
	d := func(proc string, pid int, op, target, key string) Denial {
		line := "deny " + op + " " + target + " (" + proc + ")"
		return Denial{Process: proc, PID: pid, Operation: op, Target: target, Label: srtlink.KeyLabel(key), Line: line}
	}
	for _, c := range []struct {
		file string
		want []Denial
	}{
		{"testdata/logstream-compact.txt", []Denial{
			d("cat", 41234, "file-read-data", "/Users/u/.ssh/id_ed25519", "cat ~/.ssh/id_ed25519"),
			d("bash", 41230, "file-write-create", "/Users/u/proj/.bashrc", "echo x >> .bashrc"),
			d("curl", 41240, "network-outbound", "93.184.215.14:443", "curl https://example.com"),
			d("Code Helper (Renderer)", 41260, "file-read-data", "/Users/u/.aws/credentials", "code ."),
			d("python3", 41270, "sysctl-read", "kern.bootargs", "python3 x.py"),
			d("ls", 41300, "file-read-data", "/Users/u/dir with spaces/f", "ls 'dir with spaces'"),
		}},
		{"testdata/logstream-default.txt", []Denial{
			d("cat", 41234, "file-read-data", "/Users/u/.ssh/id_ed25519", "cat ~/.ssh/id_ed25519"),
			d("git", 41240, "file-write-unlink", "/Users/u/proj/.git/hooks/pre-commit", "git commit"),
		}},
	} {
		f, err := os.Open(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var got []Denial
		s := bufio.NewScanner(f)
		for s.Scan() {
			if d, ok := ParseLogLine(s.Text(), nonce); ok {
				got = append(got, d)
			}
		}
		f.Close()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", c.file, got, c.want)
		}
	}
}

func TestParseLogLineRefuses(t *testing.T) {
	tag := LogTag("true", "n0")
	for _, line := range []string{
		"",
		"Sandbox: cat(1) deny(1) file-read-data /x",                         // no tag
		"Sandbox: cat(1) deny(1) file-read-data /x " + LogTag("true", "n1"), // another nonce
		"Sandbox: cat(x) deny(1) file-read-data /x " + tag,                  // no pid
		"Sandbox: cat(1) allow(1) file-read-data /x " + tag,                 // no deny
		"Sandbox: cat(1) deny(1) " + tag,                                    // no operation
		"Sandbox: cat(1) deny(1) file-read-data /x CMD64_a b_END__n0_SBX",   // no base64 label
		"kernel: 2 duplicate reports for Sandbox: cat(1) deny(1) file-read-data /x " + tag,
	} {
		if d, ok := ParseLogLine(line, "n0"); ok {
			t.Errorf("ParseLogLine(%q) = %+v", line, d)
		}
	}
	if _, ok := ParseLogLine("Sandbox: cat(1) deny(1) file-read-data /x "+tag, ""); ok {
		t.Error("a line parsed without a nonce to filter on")
	}
}

// FuzzParseLogLine: whatever a line holds, a denial parsed from it carries
// the nonce's tag, a pid and an operation, and its line names them.
func FuzzParseLogLine(f *testing.F) {
	for _, file := range []string{"testdata/logstream-compact.txt", "testdata/logstream-default.txt"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		s := bufio.NewScanner(bytes.NewReader(data))
		for s.Scan() {
			f.Add(s.Text())
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, ok := ParseLogLine(line, "k3j9x2m1p")
		if !ok {
			return
		}
		if d.Operation == "" || d.PID < 0 || d.Process == "" {
			t.Fatalf("ParseLogLine(%q) = %+v", line, d)
		}
		if want := "deny " + d.Operation; len(d.Line) < len(want) || d.Line[:len(want)] != want {
			t.Fatalf("line %q does not start with %q", d.Line, want)
		}
	})
}
