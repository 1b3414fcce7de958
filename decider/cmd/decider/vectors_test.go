package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// vector is one case of shared/decider-protocol/vectors.
type vector struct {
	Name          string `json:"name"`
	Dir           string `json:"dir"`
	Ext           bool   `json:"ext"`
	Message       string `json:"message"`
	MessageBase64 string `json:"messageBase64"`
	Expect        struct {
		OK    bool   `json:"ok"`
		T     string `json:"t"`
		Error string `json:"error"`
	} `json:"expect"`
}

func (v vector) wire() []byte {
	if v.MessageBase64 != "" {
		b, _ := base64.StdEncoding.DecodeString(v.MessageBase64)
		return b
	}
	return []byte(v.Message)
}

func repoRoot(t *testing.T) string {
	dir, _ := os.Getwd()
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
	}
	t.Fatal("go.work not found")
	return ""
}

// TestVectorsAgainstTheBinary runs every to-decider vector through the
// built decider, as a black box: a well-formed message keeps the link (the
// decider still answers a request after it), a broken one ends the decider
// with its reason.
func TestVectorsAgainstTheBinary(t *testing.T) {
	bin := deciderBin
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "shared", "decider-protocol", "vectors", "*.json"))
	if len(files) == 0 {
		t.Fatal("no vectors")
	}
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []vector
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			if c.Dir != "to-decider" {
				continue
			}
			if c.Expect.OK && c.Expect.T == "body" {
				continue // the reference decider never asks for a body: any body is out of sequence for it
			}
			ran++
			t.Run(c.Name, func(t *testing.T) { runVector(t, bin, c) })
		}
	}
	if ran < 50 {
		t.Fatalf("only %d to-decider vectors ran", ran)
	}
}

func runVector(t *testing.T, bin string, c vector) {
	// A case without srt.v1 speaks the reference's length framing, where no
	// extension can be offered; one with it speaks line framing.
	d := startDecider(t, bin, !c.Ext)
	hello := c.Expect.T == "hello" || strings.Contains(c.Message, `"t":"hello"`) && !c.Expect.OK && c.Expect.Error != "unexpected message"
	if !hello {
		ext := ""
		if c.Ext {
			ext = `,"ext":["srt.v1"]`
		}
		d.send(t, []byte(`{"t":"hello","proto":1`+ext+`}`))
		if line := d.read(t); !strings.Contains(line, `"t":"hello"`) {
			t.Fatalf("no hello from the decider: %q", line)
		}
	}
	d.send(t, c.wire())
	switch {
	case c.Expect.OK && c.Expect.T == "hello":
		if line := d.read(t); !strings.Contains(line, `"t":"hello"`) {
			t.Fatalf("decider did not answer the hello: %q (%s)", line, d.stderr.String())
		}
	case c.Expect.OK:
		// Still alive: a fresh request gets its verdict.
		req := `{"t":"req","id":9000000,"method":"GET","host":"example.org","port":80,"path":"/"}`
		if c.Ext {
			req = `{"t":"req","id":9000000,"method":"GET","host":"example.org","port":80,"path":"/","kind":"http","user":"srt"}`
		}
		d.send(t, []byte(req))
		for {
			line := d.read(t)
			if strings.Contains(line, `"id":9000000`) {
				break
			}
		}
	default:
		d.wait(t)
		want := "decider: stopped (proxy: " + c.Expect.Error + ")"
		if !strings.Contains(d.stderr.String(), want) {
			t.Fatalf("want %q, got %q", want, d.stderr.String())
		}
	}
}

type deciderProc struct {
	cmd    *exec.Cmd
	proxy  *os.File
	ctl    *os.File
	lines  *bufio.Reader
	length bool
	stderr *bytes.Buffer
}

func startDecider(t *testing.T, bin string, length bool) *deciderProc {
	pair := func() (*os.File, *os.File) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|sockCloexec, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	}
	proxyOurs, proxyTheirs := pair()
	ctlOurs, ctlTheirs := pair()
	d := &deciderProc{proxy: proxyOurs, ctl: ctlOurs, lines: bufio.NewReader(proxyOurs), length: length, stderr: &bytes.Buffer{}}
	framing := "line"
	if length {
		framing = "length"
	}
	d.cmd = exec.Command(bin, "--proxy-fd", "3", "--control-fd", "4", "--framing", framing)
	d.cmd.ExtraFiles = []*os.File{proxyTheirs, ctlTheirs}
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	proxyTheirs.Close()
	ctlTheirs.Close()
	fmt.Fprintln(ctlOurs, `{"t":"config","network":{"allowedDomains":["example.org"],"deniedDomains":[]}}`)
	t.Cleanup(func() {
		proxyOurs.Close()
		ctlOurs.Close()
		d.cmd.Process.Kill()
		d.cmd.Wait()
	})
	return d
}

func (d *deciderProc) send(t *testing.T, msg []byte) {
	t.Helper()
	var frame []byte
	if d.length {
		frame = binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
		frame = append(frame, msg...)
	} else {
		frame = append(append([]byte(nil), msg...), '\n')
	}
	if _, err := d.proxy.Write(frame); err != nil {
		t.Fatal(err)
	}
}

func (d *deciderProc) read(t *testing.T) string {
	t.Helper()
	d.proxy.SetReadDeadline(time.Now().Add(5 * time.Second))
	if d.length {
		var size [4]byte
		if _, err := io.ReadFull(d.lines, size[:]); err != nil {
			t.Fatalf("reading from the decider: %v (stderr %q)", err, d.stderr.String())
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(d.lines, frame); err != nil {
			t.Fatalf("reading from the decider: %v (stderr %q)", err, d.stderr.String())
		}
		return string(frame)
	}
	line, err := d.lines.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from the decider: %v (stderr %q)", err, d.stderr.String())
	}
	return line
}

func (d *deciderProc) wait(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the decider kept running after a broken message (stderr %q)", d.stderr.String())
	}
}
