package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The conformance vectors live in shared/decider-protocol (README.md there
// describes them); every implementation of the protocol runs the same ones.

type vectorCase struct {
	Name          string  `json:"name"`
	Note          string  `json:"note"`
	Dir           string  `json:"dir"`
	Ext           bool    `json:"ext"`
	Mask          bool    `json:"mask"`
	Message       *string `json:"message"`
	MessageBase64 *string `json:"messageBase64"`
	Expect        struct {
		OK        bool    `json:"ok"`
		T         string  `json:"t"`
		Action    string  `json:"action"`
		ID        uint64  `json:"id"`
		Kind      string  `json:"kind"`
		Canonical *string `json:"canonical"`
		Error     string  `json:"error"`
	} `json:"expect"`
}

type framingCase struct {
	Name         string  `json:"name"`
	Note         string  `json:"note"`
	Framing      string  `json:"framing"`
	Max          int     `json:"max"`
	Stream       *string `json:"stream"`
	StreamBase64 *string `json:"streamBase64"`
	Expect       struct {
		Frames []string `json:"frames"`
		End    string   `json:"end"`
	} `json:"expect"`
}

// repoRoot is the directory holding go.work, found by walking up.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's directory")
		}
		dir = parent
	}
}

// loadCases reads every *.json in shared/decider-protocol/<sub> strictly
// into []T.
func loadCases[T any](t testing.TB, sub string) map[string][]T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "shared", "decider-protocol", sub, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in %s: %v", sub, err)
	}
	out := map[string][]T{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range data {
			if c >= 0x80 {
				t.Fatalf("%s: byte %d is not ASCII; escape it (README.md)", f, i)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var cases []T
		if err := dec.Decode(&cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = cases
	}
	return out
}

func (c *vectorCase) wire(t testing.TB) []byte {
	t.Helper()
	switch {
	case c.Message != nil && c.MessageBase64 == nil:
		return []byte(*c.Message)
	case c.MessageBase64 != nil && c.Message == nil:
		b, err := base64.StdEncoding.DecodeString(*c.MessageBase64)
		if err != nil {
			t.Fatalf("messageBase64: %v", err)
		}
		return b
	}
	t.Fatal("a case has exactly one of message and messageBase64")
	return nil
}

func decodeFor(dir string, b []byte, ext, mask bool) (Message, error) {
	if dir == "to-proxy" {
		if !mask {
			return DecodeDeciderMessage(b, ext)
		}
		return DecodeDeciderMessageExts(b, Exts{SRT: ext, Mask: mask})
	}
	return DecodeProxyMessage(b, ext)
}

var knownReasons = map[string]bool{
	ReasonOversized: true, ReasonBlankLine: true, ReasonCRLF: true,
	ReasonNotUTF8: true, ReasonNotJSON: true, ReasonNotObject: true, ReasonNull: true,
	ReasonLoneSurrogate: true, ReasonDuplicateKey: true, ReasonTooDeep: true,
	ReasonUnexpected: true, ReasonBadHello: true, ReasonBadVerdict: true, ReasonBadUpdate: true,
	ReasonBadReq: true, ReasonBadBody: true, ReasonBadRefused: true, ReasonBadSync: true,
	ReasonBadMasks: true,
}

func TestVectors(t *testing.T) {
	names := map[string]bool{}
	total := 0
	for file, cases := range loadCases[vectorCase](t, "vectors") {
		for _, c := range cases {
			total++
			if c.Name == "" || names[c.Name] {
				t.Errorf("%s: case name %q is empty or repeated", file, c.Name)
			}
			names[c.Name] = true
			t.Run(strings.TrimSuffix(file, ".json")+"/"+c.Name, func(t *testing.T) {
				runVector(t, &c)
			})
		}
	}
	if total < 150 {
		t.Errorf("%d vectors; want at least 150", total)
	}
}

func runVector(t *testing.T, c *vectorCase) {
	if c.Dir != "to-proxy" && c.Dir != "to-decider" {
		t.Fatalf("dir %q", c.Dir)
	}
	wire := c.wire(t)
	if c.Mask && !c.Ext {
		t.Fatal("mask (srt.mask.v1) comes only with ext (srt.v1)")
	}
	m, err := decodeFor(c.Dir, wire, c.Ext, c.Mask)
	if c.Expect.OK == (c.Expect.Error != "") {
		t.Fatal("expect has exactly one of ok:true and error")
	}
	if !c.Expect.OK {
		if !knownReasons[c.Expect.Error] && !IsMaskReason(c.Expect.Error) {
			t.Fatalf("expected error %q is not a Reason* constant", c.Expect.Error)
		}
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Reason != c.Expect.Error {
			t.Fatalf("decode = %#v, %v; want error %q", m, err, c.Expect.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("decode: %v (%s)", err, detail(err))
	}
	if m.Type() != c.Expect.T {
		t.Errorf("t = %q; want %q", m.Type(), c.Expect.T)
	}
	var action string
	if v, ok := m.(Verdict); ok {
		action = v.Action()
	}
	if action != c.Expect.Action {
		t.Errorf("action = %q; want %q", action, c.Expect.Action)
	}
	var id uint64
	if r, ok := m.(interface{ RequestID() uint64 }); ok {
		id = r.RequestID()
	}
	if id != c.Expect.ID {
		t.Errorf("id = %d; want %d", id, c.Expect.ID)
	}
	var kind string
	if r, ok := m.(*Req); ok {
		kind = r.Kind.String()
	}
	if kind != c.Expect.Kind {
		t.Errorf("kind = %q; want %q", kind, c.Expect.Kind)
	}
	want := string(wire)
	if c.Expect.Canonical != nil {
		want = *c.Expect.Canonical
		if want == string(wire) {
			t.Error("canonical is given but equals the message; leave it out")
		}
	}
	enc, err := Encode(m)
	if err != nil {
		t.Fatalf("Encode: %v (%s)", err, detail(err))
	}
	if string(enc) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", enc, want)
	}
}

func detail(err error) string {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Detail
	}
	return ""
}

func TestFramingVectors(t *testing.T) {
	total := 0
	for file, cases := range loadCases[framingCase](t, "framing") {
		for _, c := range cases {
			total++
			t.Run(strings.TrimSuffix(file, ".json")+"/"+c.Name, func(t *testing.T) {
				runFramingVector(t, &c)
			})
		}
	}
	if total == 0 {
		t.Error("no framing vectors")
	}
}

func runFramingVector(t *testing.T, c *framingCase) {
	f, err := ParseFraming(c.Framing)
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	switch {
	case c.Stream != nil && c.StreamBase64 == nil:
		stream = []byte(*c.Stream)
	case c.StreamBase64 != nil && c.Stream == nil:
		if stream, err = base64.StdEncoding.DecodeString(*c.StreamBase64); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("a case has exactly one of stream and streamBase64")
	}
	r := NewReader(bytes.NewReader(stream), f, c.Max)
	var frames []string
	var end string
	for {
		frame, err := r.Read()
		if err == nil {
			frames = append(frames, string(frame))
			continue
		}
		var pe *ProtocolError
		switch {
		case err == io.EOF:
			end = "eof"
		case err == io.ErrUnexpectedEOF:
			end = "truncated"
		case errors.As(err, &pe):
			end = pe.Reason
		default:
			t.Fatalf("Read: %v", err)
		}
		break
	}
	if strings.Join(frames, "\x00") != strings.Join(c.Expect.Frames, "\x00") || len(frames) != len(c.Expect.Frames) {
		t.Errorf("frames = %q; want %q", frames, c.Expect.Frames)
	}
	if end != c.Expect.End {
		t.Errorf("end = %q; want %q", end, c.Expect.End)
	}
}
