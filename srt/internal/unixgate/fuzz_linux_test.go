package unixgate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzParseUnixAddr: any address a command gives parses without panic
// into what the kernel would take it for, and a path or abstract name
// laid out as a C program does comes back as it was.
func FuzzParseUnixAddr(f *testing.F) {
	f.Add([]byte(nil), "")
	f.Add(pathAddr("/run/a.sock"), "/run/a.sock")
	f.Add(pathAddr(strings.Repeat("p", sunPathMax)), strings.Repeat("q", sunPathMax))
	f.Add(abstractAddr("a\x00b"), "\x00x\x00")
	f.Add([]byte{unix.AF_UNIX, 0}, "rel/a.sock")
	f.Add([]byte{unix.AF_INET, 0, 1, 2}, "")
	f.Fuzz(func(t *testing.T, sa []byte, name string) {
		kind, got, e := parseUnixAddr(sa)
		unixFamily := len(sa) >= 2 && le.Uint16(sa) == unix.AF_UNIX
		if (e == unix.EINVAL) != (unixFamily && len(sa) > sockaddrUnSize) || (e != 0 && e != unix.EINVAL) {
			t.Fatalf("%q: errno %v", sa, e)
		}
		switch kind {
		case addrOther:
			if got != nil || (e == 0 && unixFamily) {
				t.Fatalf("%q: taken for no Unix address, name %q", sa, got)
			}
		case addrUnnamed:
			if len(sa) != 2 || got != nil {
				t.Fatalf("%q: taken for unnamed", sa)
			}
		case addrAbstract:
			if !bytes.Equal(got, sa[2:]) || got[0] != 0 {
				t.Fatalf("%q: abstract name %q", sa, got)
			}
		case addrPath:
			if len(got) == 0 || len(got) > sunPathMax || bytes.IndexByte(got, 0) >= 0 || !bytes.HasPrefix(sa[2:], got) ||
				(len(got) < len(sa)-2 && sa[2+len(got)] != 0) {
				t.Fatalf("%q: path %q", sa, got)
			}
		default:
			t.Fatalf("%q: kind %d", sa, kind)
		}

		// Round trip.
		if len(name) > sunPathMax {
			name = name[:sunPathMax]
		}
		if name == "" {
			return
		}
		var sa2 []byte
		want := addrPath
		if name[0] == 0 {
			want, sa2 = addrAbstract, abstractAddr(name[1:])
		} else {
			if i := strings.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			sa2 = pathAddr(name)
		}
		if kind, got, e := parseUnixAddr(sa2); kind != want || string(got) != name || e != 0 {
			t.Fatalf("%q laid out as %q: got %d %q %v", name, sa2, kind, got, e)
		}
	})
}

// FuzzReadMessage: whatever struct msghdr and memory a command offers,
// readMessage does not panic, asks the memory for bounded amounts only,
// and what it returns is what the header's lengths say: the address cut
// at sockaddr_storage, the data the iovecs' sum (cut at maxData for a
// stream), the control messages whole.
func FuzzReadMessage(f *testing.F) {
	seed := layMessage(pathAddr("/a"), [][]byte{[]byte("he"), nil, []byte("llo")}, unix.UnixRights(3, 4))
	f.Add(seed.b, false)
	f.Add(seed.b, true)
	f.Add(layMessage(nil, nil, nil).b, false)
	f.Add(layMessage(make([]byte, 200), [][]byte{{1}}, cmsg(1, 2, nil)).b, true)
	f.Fuzz(func(t *testing.T, mem []byte, stream bool) {
		if len(mem) < msghdrSize {
			mem = append(mem, make([]byte, msghdrSize-len(mem))...)
		}
		m := &fakeMemory{b: mem}
		msg, err := readMessage(mem[:msghdrSize], stream, m.read)
		if m.negative || m.largest > maxData || m.asked > maxAddr+16*maxIov+maxData+maxControl {
			t.Fatalf("asked for %d bytes in all, %d at once (negative: %v)", m.asked, m.largest, m.negative)
		}
		if err != nil {
			for _, e := range []unix.Errno{unix.EINVAL, unix.EMSGSIZE, unix.ENOBUFS, unix.EFAULT} {
				if errnoIs(err, e) {
					return
				}
			}
			t.Fatalf("error %v", err)
		}
		h := decodeMsghdr(mem)
		wantName := 0
		if h.name != 0 && h.nameLen != 0 {
			wantName = min(int(h.nameLen), maxAddr)
		}
		if len(msg.name) != wantName {
			t.Fatalf("name of %d bytes, msg_namelen %d", len(msg.name), h.nameLen)
		}
		sum := uint64(0) // each length below 2^63, the sum kept at maxData at most
		for i := uint64(0); i < h.iovLen; i++ {
			sum = min(sum+le.Uint64(mem[h.iov-memBase+16*i+8:]), maxData+1)
		}
		if stream {
			sum = min(sum, maxData)
		}
		if uint64(len(msg.data)) != sum {
			t.Fatalf("data of %d bytes, iovecs of %d", len(msg.data), sum)
		}
		if h.control == 0 {
			h.controlLen = 0
		}
		if uint64(len(msg.control)) != h.controlLen || (h.controlLen > 0 && !bytes.Equal(msg.control, mem[h.control-memBase:][:h.controlLen])) {
			t.Fatalf("control of %d bytes, msg_controllen %d", len(msg.control), h.controlLen)
		}
	})
}

// FuzzMessageRoundTrip: a message laid out as a C program does comes back
// as it was.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add(pathAddr("/a"), []byte("hello"), uint64(0x0203), unix.UnixRights(3), false)
	f.Add([]byte(nil), []byte(""), uint64(0), []byte(nil), true)
	f.Fuzz(func(t *testing.T, name, data []byte, cuts uint64, control []byte, stream bool) {
		// cuts splits data into chunks: each byte of it a chunk's length
		// (empty chunks too), the rest the last chunk.
		var chunks [][]byte
		rest := data
		for c := cuts; c != 0 && len(chunks) < 8; c >>= 8 {
			n := min(int(c&0xff)%8, len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		chunks = append(chunks, rest)
		mem := layMessage(name, chunks, control)
		m, err := readMessage(mem.b[:msghdrSize], stream, mem.read)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(name) > maxAddr {
			name = name[:maxAddr]
		}
		if !bytes.Equal(m.name, name) || !bytes.Equal(m.data, data) || !bytes.Equal(m.control, control) {
			t.Fatalf("got %q %q %q, want %q %q %q", m.name, m.data, m.control, name, data, control)
		}
	})
}

// FuzzRightsSlots: any control buffer is walked without panic, each slot
// lies inside it, in order, at most SCM_MAX_FD of them; where x/sys parses
// the buffer, the descriptors agree with its; messages laid out with
// CMSG_SPACE come back.
func FuzzRightsSlots(f *testing.F) {
	f.Add(unix.UnixRights(3, 4, 5), []byte{1, 2, 3, 4}, uint8(2))
	f.Add(cmsg(unix.SOL_SOCKET, unix.SCM_CREDENTIALS, make([]byte, 12)), []byte(nil), uint8(0))
	f.Add(unix.UnixRights(3)[:15], []byte{7}, uint8(1))
	f.Fuzz(func(t *testing.T, control, fdBytes []byte, other uint8) {
		slots, e := rightsSlots(control)
		if e != 0 && e != unix.EINVAL {
			t.Fatalf("errno %v", e)
		}
		if len(slots) > scmMaxFD {
			t.Fatalf("%d slots", len(slots))
		}
		for i, p := range slots {
			if p < unix.SizeofCmsghdr || p+4 > len(control) || (i > 0 && p < slots[i-1]+4) {
				t.Fatalf("slot %d at %d in %d bytes (%v)", i, p, len(control), slots)
			}
		}
		if msgs, err := unix.ParseSocketControlMessage(control); err == nil {
			var want []int
			for _, m := range msgs {
				if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_RIGHTS {
					// The kernel takes whole descriptors only; x/sys's
					// ParseUnixRights indexes past a partial one.
					m.Data = m.Data[:len(m.Data)&^3]
					fds, _ := unix.ParseUnixRights(&m)
					want = append(want, fds...)
				}
			}
			if len(want) > scmMaxFD {
				if e != unix.EINVAL {
					t.Fatalf("%d descriptors accepted", len(want))
				}
			} else if got := fdsOf(control, slots); e != 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v %v, x/sys %v", got, e, want)
			}
		}

		// Round trip: descriptors from fdBytes, in two SCM_RIGHTS messages
		// around one of another type.
		var fds []int
		for i := 0; i+2 <= len(fdBytes) && len(fds) < 64; i += 2 {
			fds = append(fds, int(le.Uint16(fdBytes[i:])))
		}
		half := min(int(other), len(fds))
		built := concat(unix.UnixRights(fds[:half]...), cmsg(int32(other), int32(other)>>1, fdBytes), unix.UnixRights(fds[half:]...))
		slots, e = rightsSlots(built)
		if got := fdsOf(built, slots); e != 0 || len(got) != len(fds) || (len(fds) > 0 && !reflect.DeepEqual(got, fds)) {
			t.Fatalf("%v laid out: got %v %v", fds, got, e)
		}
	})
}

func fdsOf(control []byte, slots []int) []int {
	var fds []int
	for _, p := range slots {
		fds = append(fds, int(int32(le.Uint32(control[p:]))))
	}
	return fds
}

// FuzzParseDiagReply: any datagram parses without panic, each entry
// reported comes from a UNIX_DIAG_VFS attribute inside it; a dump laid out
// as the kernel does comes back whole, and done when it says so.
func FuzzParseDiagReply(f *testing.F) {
	f.Add(diagReply([]diagEntry{{1, 2}, {3, 4}}, true), []byte{1, 0, 0, 0, 2, 0, 0, 0}, true, uint8(0))
	f.Add(diagReply(nil, true), []byte(nil), false, uint8(1))
	f.Add(nlmsg(unix.NLMSG_ERROR, make([]byte, 20)), []byte{9}, true, uint8(3))
	f.Fuzz(func(t *testing.T, buf, raw []byte, done bool, stop uint8) {
		got, d, err := collect(buf, int(stop))
		if len(got) > len(buf)/12 {
			t.Fatalf("%d entries from %d bytes", len(got), len(buf))
		}
		if stop > 0 && len(got) > int(stop) || (stop > 0 && len(got) == int(stop) && !d) {
			t.Fatalf("stop after %d: got %d, done %v", stop, len(got), d)
		}
		if err != nil && !d && !errnoIs(err, unix.EINVAL) {
			t.Fatalf("error %v, not done", err)
		}

		var entries []diagEntry
		for i := 0; i+8 <= len(raw) && len(entries) < 100; i += 8 {
			entries = append(entries, diagEntry{le.Uint32(raw[i+4:]), le.Uint32(raw[i:])})
		}
		got, names, d, err := collectNames(diagReply(entries, done), int(stop))
		want, wantDone := entries, done
		if stop > 0 && int(stop) <= len(entries) {
			want, wantDone = entries[:stop], true
		}
		if err != nil || d != wantDone || len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%v laid out: got %v %v %v", entries, got, d, err)
		}
		for _, n := range names {
			if n != "/x" {
				t.Fatalf("%v laid out: names %q, want /x each", entries, names)
			}
		}
	})
}
