package sandbox

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSparesOfferTakeGiveBack: the outer srt's offer is taken once (a
// second taker finds it gone), offered again when the taker's lease ends
// (one lease is watched at a time), and ends with the outer srt; the
// listeners taken are the outer's ports.
func TestSparesOfferTakeGiveBack(t *testing.T) {
	s, err := offerSpares()
	if err != nil {
		t.Fatal(err)
	}
	end := int(s.end.Fd())
	files, ports, err := takeSpares(end)
	if err != nil {
		t.Fatal(err)
	}
	if ports != s.ports || len(files) != len(s.files) {
		t.Fatalf("took %v (%d listeners), offered %v (%d)", ports, len(files), s.ports, len(s.files))
	}
	for _, f := range files {
		f.Close()
	}
	if _, _, err := takeSpares(end); err == nil || !strings.Contains(err.Error(), "another srt in this sandbox holds them") {
		t.Fatalf("a second take: %v", err)
	}
	lease := sendLease(end)
	if lease < 0 {
		t.Fatal("no lease sent")
	}
	// A second lease while the first is watched: the outer srt closes it
	// (its peer hangs up), and its end offers nothing.
	second := sendLease(end)
	if second < 0 {
		t.Fatal("no second lease sent")
	}
	pfd := []unix.PollFd{{Fd: int32(second), Events: unix.POLLIN}}
	if n, err := unix.Poll(pfd, 5000); n != 1 || err != nil || pfd[0].Revents&unix.POLLHUP == 0 {
		t.Fatalf("the second lease is still held by the outer srt: %v %v %#x", n, err, pfd[0].Revents)
	}
	unix.Close(second)
	time.Sleep(50 * time.Millisecond)
	if _, _, err := takeSpares(end); err == nil {
		t.Fatal("offered again when a refused lease ended")
	}
	unix.Close(lease) // the srt inside done (or killed)
	var again []*os.File
	for i := 0; i < 200; i++ {
		if again, _, err = takeSpares(end); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("not offered again after the lease ended: %v", err)
	}
	for _, f := range again {
		f.Close()
	}
	// The outer srt gone: its end closed, nothing is offered.
	dup, err := unix.Dup(end)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	s.close()
	if _, _, err := takeSpares(dup); err == nil || !strings.Contains(err.Error(), "the outer srt is gone") {
		t.Fatalf("after the outer srt closed: %v", err)
	}
}

// TestSparesHostileOffers: what is not an outer srt's offer is refused,
// and the descriptors it carried are closed.
func TestSparesHostileOffers(t *testing.T) {
	listen := func(t *testing.T, family int, sa unix.Sockaddr) *os.File {
		t.Helper()
		f, _, err := listenTCP(family, sa)
		if err != nil {
			t.Skipf("cannot listen: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	lo := func(t *testing.T) *os.File {
		return listen(t, unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	}
	send := func(t *testing.T, text string, files ...*os.File) int {
		t.Helper()
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(pair[0]); unix.Close(pair[1]) })
		var fds []int
		for _, f := range files {
			fds = append(fds, int(f.Fd()))
		}
		var oob []byte
		if len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		if err := unix.Sendmsg(pair[0], []byte(text), oob, nil, 0); err != nil {
			t.Fatal(err)
		}
		return pair[1]
	}
	unconnected := func(t *testing.T) *os.File {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), "tcp")
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, c := range []struct {
		name  string
		offer func(t *testing.T) int
		want  string
	}{
		{"another text", func(t *testing.T) int { return send(t, "hello", lo(t), lo(t)) }, "something else than an outer srt's listeners"},
		{"no listeners", func(t *testing.T) int { return send(t, sparesOffer) }, "0 listeners on 0 ports"},
		{"one port", func(t *testing.T) int { return send(t, sparesOffer, lo(t)) }, "1 listeners on 1 ports"},
		{"three ports", func(t *testing.T) int { return send(t, sparesOffer, lo(t), lo(t), lo(t)) }, "3 listeners on 3 ports"},
		{"a socket not listening", func(t *testing.T) int { return send(t, sparesOffer, lo(t), unconnected(t)) }, "not a listening TCP socket"},
		{"a listener on every address", func(t *testing.T) int {
			return send(t, sparesOffer, lo(t), listen(t, unix.AF_INET, &unix.SockaddrInet4{}))
		}, "a listener passed is on 0.0.0.0, not on the loopback"},
		{"a listener on another loopback address", func(t *testing.T) int {
			// (127.0.0.2: an inner srt's command, told localhost,
			// would reach whatever listens on 127.0.0.1 there instead)
			return send(t, sparesOffer, lo(t), listen(t, unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 2}}))
		}, "2 listeners on 2 ports were passed, where two ports of 127.0.0.1 are needed"},
		{"a pipe", func(t *testing.T) int {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return send(t, sparesOffer, lo(t), r)
		}, "not a listening TCP socket"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd := c.offer(t)
			before := openFDs(t)
			files, _, err := takeSpares(fd)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%d files), want an error with %q", err, len(files), c.want)
			}
			if after := openFDs(t); after != before {
				t.Errorf("%d descriptors open before, %d after: the refused offer's were not closed", before, after)
			}
		})
	}
}

// TestInheritedSocketChecked: SRT_LANDLOCK_LISTENERS must name a Unix
// sequenced-packet socket.
func TestInheritedSocketChecked(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for v, want := range map[string]string{
		"x": "not a descriptor number", "2": "not a descriptor number", "-5": "not a descriptor number", "99999999": "not a descriptor number",
		strconv.Itoa(int(r.Fd())): "is not the socket an outer srt passed",
	} {
		if _, err := inheritedSocket(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", v, err, want)
		}
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
