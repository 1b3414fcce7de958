package protocol

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	sentA = "fake_value_aaaaaaaaaaaaaaaa"
	sentB = "fake_value_bbbbbbbbbbbbbbbb"
	sentC = "fake_value_cccccccccccccccc"
)

func maskReason(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("%v is not a *ProtocolError", err)
	}
	return pe.Reason
}

// TestMaskTable runs the link rules of srt.mask.v1 over a sequence of
// messages: each step's exact reason, and a refused step leaving the table
// as it was.
func TestMaskTable(t *testing.T) {
	add := func(ms ...Mask) *Masks { return &Masks{Masks: ms} }
	drop := func(ids ...string) *Masks { return &Masks{Drop: ids} }
	aws := func(pair, role string) *AWSRole { return &AWSRole{Pair: pair, Role: role} }
	table := NewMaskTable()
	steps := []struct {
		m    *Masks
		want string
	}{
		{add(Mask{ID: "c1.1", Sentinel: sentA, Value: "one"}, Mask{ID: "c1.2", Sentinel: sentB, Value: "two", AWS: aws("p", AWSAccessKeyID)}), ""},
		{add(Mask{ID: "c1.1", Sentinel: sentC, Value: "x"}), "mask id c1.1 given twice"},
		{add(Mask{ID: "c2.1", Sentinel: sentA, Value: "x"}), "sentinel of mask c2.1 overlaps mask c1.1"},
		{add(Mask{ID: "c2.1", Sentinel: "x" + sentB + "x", Value: "x"}), "sentinel of mask c2.1 overlaps mask c1.2"},
		{add(Mask{ID: "c2.1", Sentinel: sentA[:20], Value: "x"}), "sentinel of mask c2.1 overlaps mask c1.1"},
		{add(Mask{ID: "c2.1", Sentinel: sentC, Value: "x", AWS: aws("p", AWSAccessKeyID)}), "aws pair p has two masks of role accessKeyId"},
		{add(Mask{ID: "c2.1", Sentinel: sentC, Value: "x", AWS: aws("p", AWSSecretAccessKey)}), ""},
		{drop("c1.1", "c9.9"), "drop names unknown mask c9.9"},
		{drop("c1.1"), ""},
		{drop("c1.1"), "drop names unknown mask c1.1"},
		// A dropped id is never given again; its sentinel is free.
		{add(Mask{ID: "c1.1", Sentinel: sentA, Value: "x"}), "mask id c1.1 given twice"},
		{add(Mask{ID: "c3.1", Sentinel: sentA, Value: "again"}), ""},
	}
	for i, s := range steps {
		before := snapshot(table)
		got := maskReason(t, table.Apply(s.m))
		if got != s.want {
			t.Fatalf("step %d: Apply = %q; want %q", i, got, s.want)
		}
		if got != "" && !reflect.DeepEqual(before, snapshot(table)) {
			t.Fatalf("step %d: a refused message changed the table", i)
		}
	}
	ms, err := table.Resolve([]string{"c3.1", "c1.2"})
	if err != nil || len(ms) != 2 || ms[0].Value != "again" || ms[1].AWS.Role != AWSAccessKeyID {
		t.Fatalf("Resolve = %+v, %v", ms, err)
	}
	for _, id := range []string{"c1.1", "c4.1"} {
		if _, err := table.Resolve([]string{"c3.1", id}); maskReason(t, err) != "inject names unknown mask "+id {
			t.Errorf("Resolve(%s) = %v", id, err)
		}
	}
	if ms, err := table.Resolve(nil); ms != nil || err != nil {
		t.Errorf("Resolve(nil) = %v, %v", ms, err)
	}
}

// TestMasksLimits: the exact bounds of a mask's fields, and the frame's.
func TestMasksLimits(t *testing.T) {
	x := Exts{SRT: true, Mask: true}
	for _, c := range []struct {
		name string
		m    Mask
		ok   bool
	}{
		{"value-65536", Mask{ID: "a", Sentinel: sentA, Value: strings.Repeat("v", MaxMaskValue)}, true},
		{"value-65537", Mask{ID: "a", Sentinel: sentA, Value: strings.Repeat("v", MaxMaskValue+1)}, false},
		{"value-not-utf8", Mask{ID: "a", Sentinel: sentA, Value: "\xff"}, false},
		{"sentinel-8192", Mask{ID: "a", Sentinel: strings.Repeat("s", MaxSentinel), Value: "v"}, true},
		{"sentinel-8193", Mask{ID: "a", Sentinel: strings.Repeat("s", MaxSentinel+1), Value: "v"}, false},
	} {
		b, err := Encode(&Masks{Masks: []Mask{c.m}})
		if (err == nil) != c.ok {
			t.Errorf("%s: Encode: %v", c.name, err)
			continue
		}
		if err != nil {
			if maskReason(t, err) != ReasonBadMasks || strings.Contains(err.(*ProtocolError).Detail, "vvvv") {
				t.Errorf("%s: %v (%s)", c.name, err, detail(err))
			}
			continue
		}
		m, err := DecodeDeciderMessageExts(b, x)
		if err != nil || !reflect.DeepEqual(m, &Masks{Masks: []Mask{c.m}}) {
			t.Errorf("%s: decode = %v", c.name, err)
		}
	}
	// Sixteen of the largest values do not fit one message (1 MiB).
	var many []Mask
	for i := range 16 {
		many = append(many, Mask{ID: "m." + itoa(uint64(i)), Sentinel: "fake_value_" + strings.Repeat(string(rune('a'+i)), 16), Value: strings.Repeat("v", MaxMaskValue)})
	}
	if _, err := Encode(&Masks{Masks: many}); maskReason(t, err) != ReasonOversized {
		t.Errorf("a masks message over MaxFrame: %v", err)
	}
}

// TestMasksNeverShowValue: no refusal of a masks message or an encoding
// error quotes a value.
func TestMasksNeverShowValue(t *testing.T) {
	const secret = "hunter2-SECRET"
	for _, m := range []*Masks{
		{Masks: []Mask{{ID: "a", Sentinel: sentA, Value: secret + "\x00"}}},
		{Masks: []Mask{{ID: "a", Sentinel: sentA, Value: secret}, {ID: "a", Sentinel: sentB, Value: secret}}},
		{Masks: []Mask{{ID: "a", Sentinel: sentA, Value: secret}, {ID: "b", Sentinel: sentA, Value: secret}}},
	} {
		_, err := Encode(m)
		var pe *ProtocolError
		if !errors.As(err, &pe) || strings.Contains(pe.Reason+pe.Detail, "hunter2") {
			t.Errorf("Encode = %v (%s)", err, detail(err))
		}
	}
}

// TestHelloMask: which hellos may accept srt.mask.v1.
func TestHelloMask(t *testing.T) {
	both := `{"t":"hello","proto":1,"allowedDomains":[],"deniedDomains":[],"ext":["srt.v1","srt.mask.v1"]}`
	for _, c := range []struct {
		x    Exts
		want string
	}{
		{Exts{SRT: true, Mask: true}, ""},
		{Exts{SRT: true}, ReasonBadHello},
		{Exts{}, ReasonBadHello},
	} {
		_, err := DecodeDeciderMessageExts([]byte(both), c.x)
		if got := maskReason(t, err); got != c.want {
			t.Errorf("%+v: %q; want %q", c.x, got, c.want)
		}
	}
	if _, err := Encode(&DeciderHello{AllowedDomains: []string{}, DeniedDomains: []string{}, Ext: []string{ExtMaskV1}}); maskReason(t, err) != ReasonBadHello {
		t.Errorf("srt.mask.v1 without srt.v1 encodes: %v", err)
	}
}
