package srtlink_test

import (
	"net"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/srt-sandbox/decider/srtlink"
)

// pair is a connected Unix stream socket pair.
func pair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|sockCloexec, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	return len(es)
}

// What a receiver cannot take whole is an error, and the descriptors that
// came with it are closed: more descriptors than one message carries (the
// kernel drops the rest), a line that does not decode.
func TestReceiveRefusesWhatItCannotTakeWhole(t *testing.T) {
	for _, c := range []struct {
		name  string
		line  string
		files int
		want  string
	}{
		{"too many descriptors", `{"t":"listen","id":"s1"}`, 65, "more than 64 descriptors"},
		{"a line that does not decode", `{"t":`, 2, "handoff: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := pair(t)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			fds := make([]int, c.files)
			for i := range fds {
				fds[i] = int(r.Fd())
			}
			before := openFDs(t)
			if _, _, err := a.WriteMsgUnix([]byte(c.line+"\n"), unix.UnixRights(fds...), nil); err != nil {
				t.Fatal(err)
			}
			m, files, err := srtlink.NewReceiver(b).Receive()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Receive = %+v with %d files, %v; want an error with %q", m, len(files), err, c.want)
			}
			if len(files) != 0 {
				t.Errorf("%d files with the error", len(files))
			}
			if after := openFDs(t); after != before {
				t.Errorf("%d descriptors open before, %d after", before, after)
			}
		})
	}
}

// Each message gets the descriptors sent with it, however the kernel
// joins the lines in a read: lines without descriptors queued before one
// with them (a sandbox's close, a sync, then another sandbox's listen)
// come out of one read with that listen's descriptors, and a reader that
// gave a read's descriptors to its first line handed one sandbox's
// listeners to another's close and served the listen with none — the
// sandbox's proxy connections then waited in the backlog for ever.
func TestReceiveGivesEachLineItsOwnDescriptors(t *testing.T) {
	a, b := pair(t)
	ino := func(f *os.File) uint64 {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	pipe := func() *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		t.Cleanup(func() { r.Close() })
		return r
	}
	long := map[string]string{}
	for i := 0; i < 300; i++ { // a line longer than one read's buffer
		long["127.0.0.1:"+strings.Repeat("1", 5)+string(rune('a'+i%26))+strings.Repeat("x", i%7)] = "localhost"
	}
	sent := []struct {
		m     srtlink.Message
		files []*os.File
	}{
		{srtlink.Message{T: srtlink.TClose, ID: "s0"}, nil},
		{srtlink.Message{T: srtlink.TSync, Q: 1}, nil},
		{srtlink.Message{T: srtlink.TListen, ID: "s1"}, []*os.File{pipe(), pipe()}},
		{srtlink.Message{T: srtlink.TClose, ID: "s2"}, nil},
		{srtlink.Message{T: srtlink.TListen, ID: "s3"}, []*os.File{pipe()}},
		{srtlink.Message{T: srtlink.TListen, ID: "s4", Role: srtlink.RoleDNS}, []*os.File{pipe(), pipe()}},
		{srtlink.Message{T: srtlink.TListen, ID: "s5", Role: srtlink.RoleCapture, Loopback: long}, nil},
		{srtlink.Message{T: srtlink.TClose, ID: "s6"}, nil},
		{srtlink.Message{T: srtlink.TListen, ID: "s7", Role: srtlink.RoleCapture, Loopback: long}, []*os.File{pipe()}},
		{srtlink.Message{T: srtlink.TSync, Q: 2}, nil},
	}
	// All of it is queued before the receiver reads.
	for _, s := range sent {
		if err := srtlink.Send(a, s.m, s.files); err != nil {
			t.Fatal(err)
		}
	}
	before := openFDs(t)
	r := srtlink.NewReceiver(b)
	got := 0
	for _, s := range sent {
		m, files, err := r.Receive()
		if err != nil {
			t.Fatalf("after %s %s: %v", s.m.T, s.m.ID, err)
		}
		got += len(files)
		if m.T != s.m.T || m.ID != s.m.ID || m.Q != s.m.Q {
			t.Fatalf("received %s %s %d, want %s %s %d", m.T, m.ID, m.Q, s.m.T, s.m.ID, s.m.Q)
		}
		var want, have []uint64
		for _, f := range s.files {
			want = append(want, ino(f))
		}
		for _, f := range files {
			have = append(have, ino(f))
			f.Close()
		}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("%s %s%d: descriptors of pipes %v, want %v", m.T, m.ID, m.Q, have, want)
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open after the messages, %d before (%d received)", after, before, got)
	}
}
