package egress

import (
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// AddCapture writes the handoff lines srt-proxy reads
// (srt-proxy/internal/handoff): one "listen" per role, with its sockets.
func TestAddCapture(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	defer theirs.Close()
	conn, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		t.Fatal(err)
	}
	e := &Egress{handoff: conn.(*net.UnixConn), exited: make(chan struct{})}
	defer conn.Close()
	files := func(n int) []*os.File {
		var fs []*os.File
		for range n {
			r, w, _ := os.Pipe()
			w.Close()
			t.Cleanup(func() { r.Close() })
			fs = append(fs, r)
		}
		return fs
	}
	// receive reads one line and the descriptors that came with it.
	receive := func() (string, int) {
		t.Helper()
		buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(8*4))
		n, oobn, _, _, err := unix.Recvmsg(int(theirs.Fd()), buf, oob, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, cm := range cms {
				fds, _ := unix.ParseUnixRights(&cm)
				for _, fd := range fds {
					unix.Close(fd)
				}
				got += len(fds)
			}
		}
		return string(buf[:n]), got
	}
	if err := e.AddCapture("s1", "srt.a2V5", map[string]string{"127.0.0.1:8765": "localhost"}, files(2), files(2)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		line string
		fds  int
	}{
		{`{"id":"s1","loopback":{"127.0.0.1:8765":"localhost"},"role":"capture","t":"listen","user":"srt.a2V5"}` + "\n", 2},
		{`{"id":"s1","role":"dns","t":"listen"}` + "\n", 2},
	} {
		if line, n := receive(); line != want.line || n != want.fds {
			t.Errorf("got %q with %d descriptors, want %q with %d", line, n, want.line, want.fds)
		}
	}
	// A role with no sockets sends nothing; no loopback map, no field.
	if err := e.AddCapture("s2", "srt", nil, files(1), nil); err != nil {
		t.Fatal(err)
	}
	if line, n := receive(); line != `{"id":"s2","role":"capture","t":"listen","user":"srt"}`+"\n" || n != 1 {
		t.Errorf("got %q with %d descriptors", line, n)
	}
	e.Close()
	if err := e.AddCapture("s3", "srt", nil, files(1), nil); err != ErrStopped {
		t.Errorf("after Close: %v, want ErrStopped", err)
	}
}
