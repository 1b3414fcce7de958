package srtlink_test

import (
	"net"
	"os"
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
