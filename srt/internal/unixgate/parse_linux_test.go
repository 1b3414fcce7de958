package unixgate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseUnixAddr(t *testing.T) {
	long := strings.Repeat("p", sunPathMax)
	inet := make([]byte, 16)
	le.PutUint16(inet, unix.AF_INET)
	for _, c := range []struct {
		name string
		sa   []byte
		kind addrKind
		want string
		e    unix.Errno
	}{
		{"path with its NUL", pathAddr("/run/a.sock"), addrPath, "/run/a.sock", 0},
		{"path without NUL, the length ends it", pathAddr("/run/a.sock")[:13], addrPath, "/run/a.sock", 0},
		{"path, NUL, then junk the length covers", append(pathAddr("/a"), "/b"...), addrPath, "/a", 0},
		{"path of exactly 108 bytes, no room for a NUL", pathAddr(long), addrPath, long, 0},
		{"path of 108 bytes and a NUL: longer than sockaddr_un", append(pathAddr(long), 0), addrOther, "", unix.EINVAL},
		{"sockaddr_storage's length", append(pathAddr("/a"), make([]byte, 128-5)...), addrOther, "", unix.EINVAL},
		{"abstract", abstractAddr("name"), addrAbstract, "\x00name", 0},
		{"abstract with embedded NULs, all of them the name", abstractAddr("a\x00b\x00"), addrAbstract, "\x00a\x00b\x00", 0},
		{"abstract of 108 bytes", abstractAddr(long[1:]), addrAbstract, "\x00" + long[1:], 0},
		{"abstract, empty name", abstractAddr(""), addrAbstract, "\x00", 0},
		{"unnamed: the family alone", pathAddr("")[:2], addrUnnamed, "", 0},
		{"another family", inet, addrOther, "", 0},
		{"one byte", []byte{unix.AF_UNIX}, addrOther, "", 0},
		{"nothing", nil, addrOther, "", 0},
	} {
		kind, name, e := parseUnixAddr(c.sa)
		if kind != c.kind || string(name) != c.want || e != c.e {
			t.Errorf("%s: got %d %q %v, want %d %q %v", c.name, kind, name, e, c.kind, c.want, c.e)
		}
	}
}

func TestRightsSlots(t *testing.T) {
	rights := func(fds ...int) []byte { return unix.UnixRights(fds...) }
	many := make([]int, scmMaxFD)
	for i := range many {
		many[i] = i
	}
	cred := cmsg(unix.SOL_SOCKET, unix.SCM_CREDENTIALS, make([]byte, 12))
	short := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{9, 0, 0, 0})
	le.PutUint64(short, 8) // cmsg_len below the header's size
	empty := cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, nil)
	for _, c := range []struct {
		name    string
		control []byte
		fds     []int
		e       unix.Errno
	}{
		{"one message", rights(5, 6, 7), []int{5, 6, 7}, 0},
		{"two messages, another type between", concat(rights(5), cred, rights(6, 7)), []int{5, 6, 7}, 0},
		{"other level, same type", cmsg(unix.SOL_IP, unix.SCM_RIGHTS, []byte{1, 0, 0, 0}), nil, 0},
		{"a header cut short", rights(5)[:15], nil, 0},
		{"cmsg_len past the end: the kernel refuses the copy", rights(5, 6)[:20], nil, 0},
		{"cmsg_len below the header's size stops the walk", concat(short, rights(5)), nil, 0},
		{"no descriptor", concat(empty, rights(4)), []int{4}, 0},
		{"a partial descriptor is none", concat(cmsg(unix.SOL_SOCKET, unix.SCM_RIGHTS, []byte{3, 0, 0, 0, 4, 0}), rights(8)), []int{3, 8}, 0},
		{"the last message unpadded", rights(5)[:unix.CmsgLen(4)], []int{5}, 0},
		{"SCM_MAX_FD descriptors", rights(many...), many, 0},
		{"SCM_MAX_FD in two messages, and one more", concat(rights(many[:200]...), rights(many[200:]...), rights(1)), nil, unix.EINVAL},
		{"nothing", nil, nil, 0},
	} {
		slots, e := rightsSlots(c.control)
		if got := fdsOf(c.control, slots); !reflect.DeepEqual(got, c.fds) || e != c.e {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, e, c.fds, c.e)
		}
	}
}

func concat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestReadMessage(t *testing.T) {
	name := pathAddr("/run/a.sock")
	ok := layMessage(name, [][]byte{[]byte("he"), nil, []byte("llo")}, unix.UnixRights(3))
	m, err := readMessage(ok.b[:msghdrSize], false, ok.read)
	if err != nil || !bytes.Equal(m.name, name) || string(m.data) != "hello" || !bytes.Equal(m.control, unix.UnixRights(3)) {
		t.Fatalf("got %q %q %q %v", m.name, m.data, m.control, err)
	}

	// edit lays out a message, then changes its header.
	edit := func(f func(h []byte)) *fakeMemory {
		m := layMessage(name, [][]byte{[]byte("x")}, unix.UnixRights(3))
		f(m.b[:msghdrSize])
		return m
	}
	for _, c := range []struct {
		name   string
		mem    *fakeMemory
		stream bool
		e      unix.Errno
		asked  int // at most, bytes asked of the command's memory
	}{
		{"iovcnt of UIO_MAXIOV+1", edit(func(h []byte) { le.PutUint64(h[24:], maxIov+1) }), false, unix.EMSGSIZE, len(name)},
		{"huge iovcnt", edit(func(h []byte) { le.PutUint64(h[24:], 1<<63) }), false, unix.EMSGSIZE, len(name)},
		{"iovcnt of UIO_MAXIOV, past the memory", edit(func(h []byte) { le.PutUint64(h[24:], maxIov) }), false, unix.EFAULT, len(name) + 16*maxIov},
		{"negative msg_namelen", edit(func(h []byte) { le.PutUint32(h[8:], 1<<31) }), false, unix.EINVAL, 0},
		{"control above the limit", edit(func(h []byte) { le.PutUint64(h[40:], maxControl+1) }), false, unix.ENOBUFS, len(name) + 16 + 1},
		{"control length past the memory", edit(func(h []byte) { le.PutUint64(h[40:], 1<<40) }), false, unix.ENOBUFS, len(name) + 16 + 1},
		{"name pointer unmapped", edit(func(h []byte) { le.PutUint64(h[0:], 8) }), false, unix.EFAULT, len(name)},
	} {
		_, err := readMessage(c.mem.b[:msghdrSize], c.stream, c.mem.read)
		if !errnoIs(err, c.e) || c.mem.asked > c.asked {
			t.Errorf("%s: got %v having asked for %d bytes, want %v asking %d at most", c.name, err, c.mem.asked, c.e, c.asked)
		}
	}

	// A negative iov_len, and lengths that add up past maxData: the
	// memory is never asked for the data.
	for _, c := range []struct {
		name   string
		lens   []uint64
		stream bool
		e      unix.Errno
		data   int
	}{
		{"negative iov_len", []uint64{1, 1 << 63}, true, unix.EINVAL, 0},
		{"a datagram above maxData", []uint64{maxData, 1}, false, unix.EMSGSIZE, 0},
		{"lengths whose sum wraps around", []uint64{1 << 62, 1 << 62, 1 << 62, 1 << 62}, false, unix.EMSGSIZE, 0},
		{"lengths whose sum wraps around, a stream", []uint64{1 << 62, 1 << 62, 1 << 62, 1 << 62}, true, 0, maxData},
		{"a stream send above maxData is cut", []uint64{maxData - 1, 5}, true, 0, maxData},
		{"a datagram of exactly maxData", []uint64{maxData}, false, 0, maxData},
	} {
		mem := &fakeMemory{b: make([]byte, msghdrSize+16*len(c.lens)+maxData+8)}
		le.PutUint64(mem.b[16:], at(msghdrSize))
		le.PutUint64(mem.b[24:], uint64(len(c.lens)))
		for i, l := range c.lens {
			le.PutUint64(mem.b[msghdrSize+16*i:], at(msghdrSize+16*len(c.lens)))
			le.PutUint64(mem.b[msghdrSize+16*i+8:], l)
		}
		m, err := readMessage(mem.b[:msghdrSize], c.stream, mem.read)
		if (c.e == 0 && err != nil) || (c.e != 0 && !errnoIs(err, c.e)) || len(m.data) != c.data || mem.largest > maxData {
			t.Errorf("%s: got %v and %d bytes of data (largest read %d), want %v and %d", c.name, err, len(m.data), mem.largest, c.e, c.data)
		}
	}

	// msg_namelen above sockaddr_storage is cut there.
	big := edit(func(h []byte) { le.PutUint32(h[8:], 200) })
	big.b = append(big.b, make([]byte, 200)...)
	if m, err := readMessage(big.b[:msghdrSize], false, big.read); err != nil || len(m.name) != maxAddr {
		t.Errorf("msg_namelen 200: got %d bytes, %v; want %d", len(m.name), err, maxAddr)
	}
}

func TestParseDiagReply(t *testing.T) {
	entries := []diagEntry{{1, 10}, {2<<20 | 5, 1<<32 - 1}, {0, 0}}
	got, done, err := collect(diagReply(entries, false), 0)
	if !reflect.DeepEqual(got, entries) || done || err != nil {
		t.Fatalf("got %v %v %v", got, done, err)
	}
	if got, done, err = collect(diagReply(entries, true), 2); !reflect.DeepEqual(got, entries[:2]) || !done || err != nil {
		t.Fatalf("stopping after two: got %v %v %v", got, done, err)
	}
	// The name: up to its first NUL (the kernel sends sun_path as bound),
	// after the VFS attribute or before it; none without the attribute.
	vfs := nlattr(unixDiagVFS, []byte{10, 0, 0, 0, 1, 0, 0, 0})
	named := func(attrs ...[]byte) []byte {
		return nlmsg(unix.SOCK_DIAG_BY_FAMILY, append(make([]byte, diagMsgSize), bytes.Join(attrs, nil)...))
	}
	buf := bytes.Join([][]byte{named(nlattr(unixDiagName, []byte("/run/a.sock\x00junk")), vfs), named(vfs, nlattr(unixDiagName, []byte("rel"))), named(vfs)}, nil)
	if got, names, _, err := collectNames(buf, 0); len(got) != 3 || !reflect.DeepEqual(names, []string{"/run/a.sock", "rel", "-"}) || err != nil {
		t.Fatalf("names: got %v %q %v", got, names, err)
	}

	errMsg := func(e int32) []byte {
		p := make([]byte, 20)
		le.PutUint32(p, uint32(e))
		return nlmsg(unix.NLMSG_ERROR, p)
	}
	// The last attribute of a message whose length is not a multiple of
	// 4 (its padding not counted in nlmsg_len).
	odd := diagReply(entries[:1], false)
	le.PutUint32(odd, le.Uint32(odd)-1)
	odd[40] = 11 // UNIX_DIAG_VFS's nla_len: 11, the message's end, where 12 is due
	oddAttr := nlmsg(unix.SOCK_DIAG_BY_FAMILY, append(make([]byte, diagMsgSize), 5, 0, 0, 0, 0))
	for _, c := range []struct {
		name string
		buf  []byte
		want []diagEntry
		done bool
		e    unix.Errno
	}{
		{"NLMSG_ERROR", errMsg(-int32(unix.EPERM)), nil, true, unix.EPERM},
		{"an acknowledgement is no dump", errMsg(0), nil, true, unix.EIO},
		{"NLMSG_ERROR cut short", nlmsg(unix.NLMSG_ERROR, nil), nil, true, unix.EIO},
		{"a message shorter than its header says", diagReply(entries, true)[:20], nil, false, unix.EINVAL},
		{"nlmsg_len below the header", nlmsg(unix.SOCK_DIAG_BY_FAMILY, nil)[:15], nil, false, 0},
		{"unix_diag_msg cut short", nlmsg(unix.SOCK_DIAG_BY_FAMILY, make([]byte, 12)), nil, false, 0},
		{"a VFS attribute too short to hold one", odd, nil, false, 0},
		{"an attribute of 5 bytes that ends the message", oddAttr, nil, false, 0},
		{"nothing", nil, nil, false, 0},
	} {
		got, done, err := collect(c.buf, 0)
		if !reflect.DeepEqual(got, c.want) || done != c.done || (c.e == 0 && err != nil) || (c.e != 0 && !errnoIs(err, c.e)) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", c.name, got, done, err, c.want, c.done, c.e)
		}
	}
}
