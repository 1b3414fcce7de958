package srtlink_test

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
)

// FuzzParseProxyFlags: whatever command line ParseProxyFlags takes, Args
// writes its flags back in a form ParseProxyFlags reads as the same. The
// seeds are the vectors' command lines, one argument a line.
func FuzzParseProxyFlags(f *testing.F) {
	for _, c := range srtlinktest.Flags(f) {
		f.Add(strings.Join(c.Argv, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		flags, err := srtlink.ParseProxyFlags(strings.Split(s, "\n"))
		if err != nil {
			return
		}
		args := flags.Args()
		again, err := srtlink.ParseProxyFlags(args)
		if err != nil {
			t.Fatalf("ParseProxyFlags(%q) = %v, of the Args of %+v", args, err, flags)
		}
		if back := again.Args(); !reflect.DeepEqual(back, args) {
			t.Fatalf("Args changed on the way back: %q, then %q", args, back)
		}
	})
}

// FuzzDecode: a line Decode reads encodes to one it reads the same.
func FuzzDecode(f *testing.F) {
	for _, c := range srtlinktest.Handoff(f) {
		f.Add([]byte(c.Line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := srtlink.Decode(line)
		if err != nil {
			return
		}
		enc, err := srtlink.Encode(m)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", m, err)
		}
		again, err := srtlink.Decode(enc[:len(enc)-1])
		if err != nil {
			t.Fatalf("Decode(%q): %v", enc, err)
		}
		if enc2, _ := srtlink.Encode(again); string(enc2) != string(enc) {
			t.Fatalf("%q encodes to %q, then to %q", line, enc, enc2)
		}
	})
}

// FuzzUserFor: every key's user fits SOCKS5, and carries the key's label
// (standard base64) unless it is the bare user.
func FuzzUserFor(f *testing.F) {
	for _, c := range srtlinktest.Keys(f) {
		f.Add(c.Key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		user, label := srtlink.UserFor(key), srtlink.KeyLabel(key)
		if len(user) > srtlink.MaxUser {
			t.Fatalf("UserFor(%q) is %d bytes", key, len(user))
		}
		if _, err := base64.StdEncoding.DecodeString(label); err != nil {
			t.Fatalf("KeyLabel(%q) = %q: %v", key, label, err)
		}
		if user != srtlink.BareUser && srtlink.UserLabel(user) != label {
			t.Fatalf("UserFor(%q) = %q carries %q, not %q", key, user, srtlink.UserLabel(user), label)
		}
	})
}
