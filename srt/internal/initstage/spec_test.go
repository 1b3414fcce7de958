package initstage

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgsUnixSockets(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
		err  string
	}{
		{"two", []string{"-unix-socket", "/run/a.sock", "-unix-socket", "/run/dir", "--", "true"}, []string{"/run/a.sock", "/run/dir"}, ""},
		{"a path that looks like an option", []string{"-unix-socket", "/--", "--", "true"}, []string{"/--"}, ""},
		{"a path with spaces and a newline", []string{"-unix-socket", "/a b\nc", "--", "true"}, []string{"/a b\nc"}, ""},
		{"no value", []string{"-unix-socket"}, nil, "-unix-socket needs an absolute path"},
		{"the command's separator for a value", []string{"-unix-socket", "--", "true"}, nil, "-unix-socket needs an absolute path"},
		{"a relative path", []string{"-unix-socket", "run/a.sock", "--", "true"}, nil, "-unix-socket needs an absolute path"},
		{"an empty path", []string{"-unix-socket", "", "--", "true"}, nil, "-unix-socket needs an absolute path"},
	} {
		s, cmd, err := parseArgs(append([]string{Flag}, c.args...))
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: got %v, want the error %q", c.name, err, c.err)
		case c.err == "" && (err != nil || !reflect.DeepEqual(s.UnixSockets, c.want) || !reflect.DeepEqual(cmd, []string{"true"})):
			t.Errorf("%s: got %q %q %v, want %q", c.name, s.UnixSockets, cmd, err, c.want)
		}
	}
}

// FuzzParseArgs: any argv parses without panic; what parses has absolute
// Unix socket paths and a command, and survives Args again; and a Spec
// srt builds comes back from its Args whole.
func FuzzParseArgs(f *testing.F) {
	f.Add("-unix-socket\x00/run/a.sock\x00--\x00true", "/run/a.sock\x00/run/dir", uint16(0xffff), "sh\x00-c\x00echo")
	f.Add("-landlock\x00-write\x00/tmp\x00-pass-fd\x003:4\x00--\x00x", "/a\x00", uint16(1), "--")
	f.Add("-unix-socket\x00relative\x00--\x00x", "", uint16(0), "x")
	f.Add("-ignore-port\x0070000\x00-writable\x001:2\x00-host-dev\x007\x00--", "/x", uint16(0x55), "")
	f.Fuzz(func(t *testing.T, argv, paths string, flags uint16, command string) {
		s, cmd, err := parseArgs(append([]string{Flag}, strings.Split(argv, "\x00")...))
		if err == nil {
			if len(cmd) == 0 {
				t.Fatalf("%q: no command, no error", argv)
			}
			for _, p := range s.UnixSockets {
				if !strings.HasPrefix(p, "/") {
					t.Fatalf("%q: -unix-socket %q accepted", argv, p)
				}
			}
			s2, cmd2, err := parseArgs(Args(s, cmd))
			if err != nil || !reflect.DeepEqual(s2.UnixSockets, s.UnixSockets) || !reflect.DeepEqual(cmd2, cmd) {
				t.Fatalf("%q: again: %q %q %v", argv, s2.UnixSockets, cmd2, err)
			}
		}

		// A Spec as srt builds it.
		bit := func(n uint) bool { return flags&(1<<n) != 0 }
		var want Spec
		for _, p := range strings.Split(paths, "\x00") {
			if p != "" {
				want.UnixSockets = append(want.UnixSockets, "/"+p)
			}
		}
		want.BlockUnixSockets, want.BlockNamespaces, want.Landlock = bit(0), bit(1), bit(2)
		want.RequireLandlock, want.WaitNetwork, want.WatchListeners = bit(3), bit(4), bit(5)
		if want.Landlock {
			want.LandlockScopeOnly = bit(6)
			if bit(7) {
				want.WritePaths = want.UnixSockets
			}
		}
		if want.WatchListeners && bit(8) {
			want.IgnorePorts = []int{1, 65535}
		}
		if bit(9) {
			want.DevNullFD = 9
		}
		if bit(10) {
			want.PassFDs = []PassFD{{From: 10, To: 3}}
		}
		if want.CheckMounts = bit(11); want.CheckMounts && bit(12) {
			want.HostDevs, want.Writable = []uint64{0, 1 << 63}, []FileID{{Dev: 5, Ino: 1<<64 - 1}}
		}
		wantCmd := strings.Split(command, "\x00")
		got, gotCmd, err := parseArgs(Args(want, wantCmd))
		if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotCmd, wantCmd) {
			t.Fatalf("%+v %q: got %+v %q %v", want, wantCmd, got, gotCmd, err)
		}
	})
}
