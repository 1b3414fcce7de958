package srtlink_test

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
	"github.com/srt-sandbox/decider/srtlink/srtlinktest"
)

// The conformance vectors live in shared/srtlink (README.md there
// describes them); srt's and srt-proxy's tests run them against their
// sides too.

func TestHandoffVectors(t *testing.T) {
	cases := srtlinktest.Handoff(t)
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Errorf("%s: the name is taken", c.Name)
		}
		names[c.Name] = true
		switch want := map[string]string{
			srtlink.TListen: "srt", srtlink.TClose: "srt", srtlink.TSync: "srt",
			srtlink.TReady: "srt-proxy", srtlink.TFailed: "srt-proxy",
		}[c.Message.T]; {
		case want == "":
			t.Errorf("%s: no message of type %q", c.Name, c.Message.T)
		case want != c.From:
			t.Errorf("%s: a %q comes from %s, not %q", c.Name, c.Message.T, want, c.From)
		}
		line, err := srtlink.Encode(c.Message)
		if err != nil || string(line) != c.Encoded()+"\n" {
			t.Errorf("%s: Encode = %q, %v; want %q", c.Name, line, err, c.Encoded()+"\n")
		}
		if c.Canonical == c.Line {
			t.Errorf("%s: canonical is given only when it differs from line", c.Name)
		}
		m, err := srtlink.Decode([]byte(c.Line))
		if err != nil || !reflect.DeepEqual(m, c.Message) {
			t.Errorf("%s: Decode = %+v, %v; want %+v", c.Name, m, err, c.Message)
		}
	}
}

// Every case goes through a socket pair as its sender writes it (Send)
// and as the vector spells it, and comes out as its message with its
// descriptors.
func TestHandoffVectorsOnTheWire(t *testing.T) {
	a, b := pair(t)
	r := srtlink.NewReceiver(b)
	pipes := func(n int) []*os.File {
		var fs []*os.File
		for range n {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			pw.Close()
			t.Cleanup(func() { pr.Close() })
			fs = append(fs, pr)
		}
		return fs
	}
	for _, c := range srtlinktest.Handoff(t) {
		raw := func() error {
			var oob []byte
			if c.FDs > 0 {
				var ns []int
				for _, f := range pipes(c.FDs) {
					ns = append(ns, int(f.Fd()))
				}
				oob = unix.UnixRights(ns...)
			}
			_, _, err := a.WriteMsgUnix([]byte(c.Line+"\n"), oob, nil)
			return err
		}
		for how, send := range map[string]func() error{
			"Send": func() error { return srtlink.Send(a, c.Message, pipes(c.FDs)) },
			"raw":  raw,
		} {
			if err := send(); err != nil {
				t.Fatalf("%s (%s): %v", c.Name, how, err)
			}
			m, files, err := r.Receive()
			for _, f := range files {
				f.Close()
			}
			if err != nil || !reflect.DeepEqual(m, c.Message) || len(files) != c.FDs {
				t.Errorf("%s (%s): received %+v with %d descriptors, %v; want %+v with %d", c.Name, how, m, len(files), err, c.Message, c.FDs)
			}
		}
	}
	a.Close()
	if m, _, err := r.Receive(); !errors.Is(err, srtlink.ErrEndOfStream) {
		t.Errorf("after the sender closed: %+v, %v; want ErrEndOfStream", m, err)
	}
}

func TestFlagsVectors(t *testing.T) {
	names := map[string]bool{}
	for _, c := range srtlinktest.Flags(t) {
		if names[c.Name] {
			t.Errorf("%s: the name is taken", c.Name)
		}
		names[c.Name] = true
		got, err := srtlink.ParseProxyFlags(c.Argv)
		if c.Flags == nil {
			if err == nil || err.Error() != c.Error {
				t.Errorf("%s: ParseProxyFlags(%q) = %+v, %v; want the error %q", c.Name, c.Argv, got, err, c.Error)
			}
			continue
		}
		if c.Error != "" {
			t.Errorf("%s: a case has flags or an error, not both", c.Name)
		}
		if args := c.Flags.Args(); !reflect.DeepEqual(args, c.Argv) {
			t.Errorf("%s: Args\n%q\nwant\n%q", c.Name, args, c.Argv)
		}
		if err != nil || !reflect.DeepEqual(got, *c.Flags) {
			t.Errorf("%s: ParseProxyFlags = %+v, %v; want %+v", c.Name, got, err, *c.Flags)
		}
		// "--name value" reads as "--name=value".
		var spaced []string
		for _, a := range c.Argv {
			name, v, ok := strings.Cut(a, "=")
			spaced = append(spaced, name)
			if ok {
				spaced = append(spaced, v)
			}
		}
		if got, err := srtlink.ParseProxyFlags(spaced); err != nil || !reflect.DeepEqual(got, *c.Flags) {
			t.Errorf("%s: ParseProxyFlags(%q) = %+v, %v", c.Name, spaced, got, err)
		}
	}
}

func TestUserVectors(t *testing.T) {
	for _, c := range srtlinktest.Keys(t) {
		if got := srtlink.KeyLabel(c.Key); got != c.Label {
			t.Errorf("%s: KeyLabel = %q, want %q", c.Name, got, c.Label)
		}
		if got := srtlink.UserFor(c.Key); got != c.User {
			t.Errorf("%s: UserFor = %q, want %q", c.Name, got, c.User)
		}
		// The decider reads back the label srt put in, unless the user
		// is the bare one.
		want := c.Label
		if c.User == srtlink.BareUser {
			want = ""
		}
		if got := srtlink.UserLabel(c.User); got != want {
			t.Errorf("%s: UserLabel(%q) = %q, want %q", c.Name, c.User, got, want)
		}
	}
	for _, c := range srtlinktest.Users(t) {
		if got := srtlink.UserLabel(c.User); got != c.Label {
			t.Errorf("%s: UserLabel(%q) = %q, want %q", c.Name, c.User, got, c.Label)
		}
	}
}
