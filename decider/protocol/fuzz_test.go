package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"
)

// seedVectors adds every vector message of dir to f, under both ext values.
func seedVectors(f *testing.F, dir string) {
	for _, cases := range loadCases[vectorCase](f, "vectors") {
		for _, c := range cases {
			if c.Dir != dir {
				continue
			}
			wire := c.wire(f)
			f.Add(wire, c.Ext)
			f.Add(wire, !c.Ext)
		}
	}
}

// checkDecoded is the fuzzers' property: a refusal is a *ProtocolError
// with a known reason; an accepted message encodes, deterministically, to
// bytes that decode to the same value and encode to the same bytes.
func checkDecoded(t *testing.T, decode func([]byte, bool) (Message, error), data []byte, ext bool) {
	m, err := decode(data, ext)
	// The syntax check agrees with encoding/json's (which is laxer only
	// about UTF-8, and nests deeper).
	if valid := json.Valid(data); !valid && err == nil ||
		valid && err != nil && err.Error() == ReasonNotJSON && utf8.Valid(data) {
		t.Fatalf("decode(%q) = %v, json.Valid = %v", data, err, valid)
	}
	if err != nil {
		var pe *ProtocolError
		if !errors.As(err, &pe) || !knownReasons[pe.Reason] && !IsMaskReason(pe.Reason) || m != nil {
			t.Fatalf("decode(%q) = %#v, %#v", data, m, err)
		}
		return
	}
	enc, err := Encode(m)
	if err != nil {
		t.Fatalf("decode(%q) accepted %#v, which does not encode: %v (%s)", data, m, err, detail(err))
	}
	if again, _ := Encode(m); !bytes.Equal(enc, again) {
		t.Fatalf("Encode is not deterministic: %q, %q", enc, again)
	}
	m2, err := decode(enc, ext)
	if err != nil {
		t.Fatalf("Encode(decode(%q)) = %q does not decode: %v (%s)", data, enc, err, detail(err))
	}
	if !reflect.DeepEqual(m, m2) {
		t.Fatalf("round trip of %q: %#v != %#v", data, m, m2)
	}
	if enc2, _ := Encode(m2); !bytes.Equal(enc, enc2) {
		t.Fatalf("re-encoding differs: %q, %q", enc, enc2)
	}
}

func FuzzDecodeDeciderMessage(f *testing.F) {
	seedVectors(f, "to-proxy")
	f.Fuzz(func(t *testing.T, data []byte, ext bool) {
		checkDecoded(t, DecodeDeciderMessage, data, ext)
	})
}

// FuzzDecodeDeciderMessageMask decodes under srt.v1, with srt.mask.v1 in
// force or not.
func FuzzDecodeDeciderMessageMask(f *testing.F) {
	for _, cases := range loadCases[vectorCase](f, "vectors") {
		for _, c := range cases {
			if c.Dir == "to-proxy" && c.Ext {
				f.Add(c.wire(f), c.Mask)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mask bool) {
		decode := func(b []byte, _ bool) (Message, error) {
			return DecodeDeciderMessageExts(b, Exts{SRT: true, Mask: mask})
		}
		checkDecoded(t, decode, data, true)
	})
}

// FuzzMaskTable applies a stream of masks messages (one per line) and
// resolves injects (allows) against the table: a refusal leaves the table
// as it was, and what it holds keeps its rules.
func FuzzMaskTable(f *testing.F) {
	for _, cases := range loadCases[vectorCase](f, "vectors") {
		var stream []byte
		for _, c := range cases {
			if c.Dir == "to-proxy" && c.Mask {
				stream = append(append(stream, c.wire(f)...), '\n')
			}
		}
		if stream != nil {
			f.Add(stream)
		}
	}
	f.Add([]byte(`{"t":"masks","masks":[{"id":"a.1","sentinel":"fake_value_0123456789","value":"s"}]}` + "\n" +
		`{"t":"verdict","id":1,"action":"allow","inject":["a.1"]}` + "\n" + `{"t":"masks","drop":["a.1"]}` + "\n" +
		`{"t":"verdict","id":2,"action":"allow","inject":["a.1"]}` + "\n" +
		`{"t":"masks","masks":[{"id":"a.1","sentinel":"fake_value_0123456789","value":"s"}]}`))
	f.Fuzz(func(t *testing.T, stream []byte) {
		table := NewMaskTable()
		for _, line := range bytes.Split(stream, []byte("\n")) {
			m, err := DecodeDeciderMessageExts(line, Exts{SRT: true, Mask: true})
			if err != nil {
				continue
			}
			before := snapshot(table)
			switch m := m.(type) {
			case *Masks:
				if err := table.Apply(m); err != nil {
					var pe *ProtocolError
					if !errors.As(err, &pe) || !IsMaskReason(pe.Reason) {
						t.Fatalf("Apply: %v", err)
					}
					if !reflect.DeepEqual(before, snapshot(table)) {
						t.Fatalf("a refused %q changed the table", line)
					}
				}
			case *Allow:
				got, err := table.Resolve(m.Inject)
				if err == nil && len(got) != len(m.Inject) {
					t.Fatalf("Resolve(%q) = %d masks", m.Inject, len(got))
				}
				for i := range got {
					if got[i].ID != m.Inject[i] {
						t.Fatalf("Resolve(%q)[%d] = %q", m.Inject, i, got[i].ID)
					}
				}
			}
			live := snapshot(table)
			for i := range live {
				for j := range live[:i] {
					if overlaps(live[i].Sentinel, live[j].Sentinel) || live[i].ID == live[j].ID {
						t.Fatalf("live masks %q and %q clash", live[i].ID, live[j].ID)
					}
				}
			}
		}
	})
}

// snapshot is the live masks of a table, oldest first.
func snapshot(t *MaskTable) []Mask {
	var out []Mask
	for _, id := range t.order {
		out = append(out, *t.live[id])
	}
	if len(out) != t.Len() {
		panic("the table's order and its masks disagree")
	}
	return out
}

func FuzzDecodeProxyMessage(f *testing.F) {
	seedVectors(f, "to-decider")
	f.Fuzz(func(t *testing.T, data []byte, ext bool) {
		checkDecoded(t, DecodeProxyMessage, data, ext)
	})
}

// seedFraming adds the framing vectors of framing f.
func seedFraming(f *testing.F, framing string) {
	for _, cases := range loadCases[framingCase](f, "framing") {
		for _, c := range cases {
			if c.Framing != framing {
				continue
			}
			stream := []byte{}
			if c.Stream != nil {
				stream = []byte(*c.Stream)
			} else if b, err := base64.StdEncoding.DecodeString(*c.StreamBase64); err == nil {
				stream = b
			}
			f.Add(stream, uint16(c.Max))
		}
	}
}

// checkFrames reads data in framing fr with limit max: no frame is over
// max, and the frames read, written again and re-read, come back the same.
func checkFrames(t *testing.T, fr Framing, data []byte, limit uint16) {
	maxLen := int(limit)
	var frames [][]byte
	r := NewReader(bytes.NewReader(data), fr, maxLen)
	for {
		frame, err := r.Read()
		if err != nil {
			var pe *ProtocolError
			if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &pe) {
				t.Fatalf("Read: %v", err)
			}
			if again, err2 := r.Read(); again != nil || err2 != err {
				t.Fatalf("error not sticky: %q, %v after %v", again, err2, err)
			}
			break
		}
		if len(frame) > maxLen {
			t.Fatalf("frame of %d bytes over max %d", len(frame), maxLen)
		}
		frames = append(frames, frame)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, fr)
	var wrote [][]byte
	for _, frame := range frames {
		if len(frame) == 0 {
			continue // a length frame may be empty; Writer refuses an empty message
		}
		if err := w.Write(frame); err != nil {
			t.Fatalf("Write(%q): %v", frame, err)
		}
		wrote = append(wrote, frame)
	}
	r = NewReader(&buf, fr, maxLen)
	for _, want := range wrote {
		got, err := r.Read()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("re-read %q, %v; want %q", got, err, want)
		}
	}
	if extra, err := r.Read(); err != io.EOF {
		t.Fatalf("after the frames: %q, %v", extra, err)
	}
}

func FuzzLineReader(f *testing.F) {
	seedFraming(f, "line")
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		checkFrames(t, Line, data, limit)
	})
}

func FuzzLengthReader(f *testing.F) {
	seedFraming(f, "length")
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		checkFrames(t, Length, data, limit)
	})
}
