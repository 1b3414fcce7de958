package initstage

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgsUnixSockets(t *testing.T) {
	const bad = "-unix-socket needs an absolute path, DEV:INO:CTIME:PATH or none:PATH"
	path := func(p string) UnixSocket { return UnixSocket{Path: p} }
	for _, c := range []struct {
		name string
		args []string
		want []UnixSocket
		err  string
	}{
		{"two", []string{"-unix-socket", "/run/a.sock", "-unix-socket", "/run/dir", "--", "true"}, []UnixSocket{path("/run/a.sock"), path("/run/dir")}, ""},
		{"a path that looks like an option", []string{"-unix-socket", "/--", "--", "true"}, []UnixSocket{path("/--")}, ""},
		{"a path with spaces and a newline", []string{"-unix-socket", "/a b\nc", "--", "true"}, []UnixSocket{path("/a b\nc")}, ""},
		{"pinned", []string{"-unix-socket", "2049:18446744073709551615:-9223372036854775808:/p/a:b.sock", "--", "true"},
			[]UnixSocket{{Path: "/p/a:b.sock", Pinned: true, ID: &FileID{Dev: 2049, Ino: 1<<64 - 1}, Changed: -1 << 63}}, ""},
		{"pinned to nothing", []string{"-unix-socket", "none:/p/a.sock", "--", "true"}, []UnixSocket{{Path: "/p/a.sock", Pinned: true}}, ""},
		{"no value", []string{"-unix-socket"}, nil, "-unix-socket needs a value"},
		{"the command's separator for a value", []string{"-unix-socket", "--", "true"}, nil, bad},
		{"a relative path", []string{"-unix-socket", "run/a.sock", "--", "true"}, nil, bad},
		{"an empty path", []string{"-unix-socket", "", "--", "true"}, nil, bad},
		{"pinned, a relative path", []string{"-unix-socket", "1:2:3:a.sock", "--", "true"}, nil, bad},
		{"pinned, no change time", []string{"-unix-socket", "1:2:/a.sock", "--", "true"}, nil, bad},
		{"pinned, no inode", []string{"-unix-socket", "1:/a.sock", "--", "true"}, nil, bad},
		{"pinned, a negative device", []string{"-unix-socket", "-1:2:3:/a.sock", "--", "true"}, nil, bad},
		{"pinned, an inode above 64 bits", []string{"-unix-socket", "1:18446744073709551616:3:/a.sock", "--", "true"}, nil, bad},
		{"nothing, a relative path", []string{"-unix-socket", "none:a.sock", "--", "true"}, nil, bad},
	} {
		s, cmd, err := parseArgs(append([]string{Flag}, c.args...))
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: got %v, want the error %q", c.name, err, c.err)
		case c.err == "" && (err != nil || !reflect.DeepEqual(s.UnixSockets, c.want) || !reflect.DeepEqual(cmd, []string{"true"})):
			t.Errorf("%s: got %v %q %v, want %v", c.name, s.UnixSockets, cmd, err, c.want)
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
	f.Add("-unix-socket\x001:2:-3:/a\x00-unix-socket\x00none:/b:c\x00--\x00x", "/p\x00/q", uint16(1<<13|1<<14), "x")
	f.Add("-no-namespaces\x00-tcp-rules\x00-listener-fd\x0012:9\x00-listener-fd\x003:x\x00--\x00x", "", uint16(2), "x")
	f.Add("-ignore-port\x0070000\x00-writable\x001:2\x00-host-dev\x007\x00--", "/x", uint16(0x55), "")
	f.Fuzz(func(t *testing.T, argv, paths string, flags uint16, command string) {
		s, cmd, err := parseArgs(append([]string{Flag}, strings.Split(argv, "\x00")...))
		if err == nil {
			if len(cmd) == 0 {
				t.Fatalf("%q: no command, no error", argv)
			}
			for _, u := range s.UnixSockets {
				if !strings.HasPrefix(u.Path, "/") || u.ID != nil && !u.Pinned {
					t.Fatalf("%q: -unix-socket %v accepted", argv, u)
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
		var paths2 []string
		for i, p := range strings.Split(paths, "\x00") {
			if p == "" {
				continue
			}
			paths2 = append(paths2, "/"+p)
			u := UnixSocket{Path: "/" + p}
			// pinned (bit 13), to a file (bit 14) of numbers from the index
			if bit(13) && i%2 == 0 {
				u.Pinned = true
				if bit(14) {
					u.ID, u.Changed = &FileID{Dev: uint64(i) << 40, Ino: 1<<64 - 1 - uint64(i)}, -int64(i)*1e9-1
				}
			}
			want.UnixSockets = append(want.UnixSockets, u)
		}
		want.BlockUnixSockets, want.BlockNamespaces, want.Landlock = bit(0), bit(1), bit(2)
		want.RequireLandlock, want.WaitNetwork, want.WatchListeners = bit(3), bit(4), bit(5)
		if want.Landlock {
			want.LandlockScopeOnly = bit(6)
			if bit(7) {
				want.WritePaths = paths2
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
		if bit(15) {
			want.NoNS = NoNS{On: true, Net: true, ConnectPorts: []int{1, 65535}, Listeners: []PassFD{{From: 12, To: 9}, {From: 13, To: 10}}}
		}
		wantCmd := strings.Split(command, "\x00")
		got, gotCmd, err := parseArgs(Args(want, wantCmd))
		if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotCmd, wantCmd) {
			t.Fatalf("%+v %q: got %+v %q %v", want, wantCmd, got, gotCmd, err)
		}
	})
}
