package unixgate

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// The encoders the tests check the parsers against: each lays out what a
// command (or the kernel, for sock_diag) would, independently of the
// parser it feeds.

var le = binary.LittleEndian

// pathAddr is a struct sockaddr_un for path as a C program fills it:
// the family, the path, and a NUL when there is room for one.
func pathAddr(path string) []byte {
	sa := make([]byte, 2, 2+len(path)+1)
	le.PutUint16(sa, unix.AF_UNIX)
	sa = append(sa, path...)
	if len(path) < sunPathMax {
		sa = append(sa, 0)
	}
	return sa
}

// abstractAddr is the address of the abstract name (a NUL, then name),
// its length covering exactly the name.
func abstractAddr(name string) []byte {
	sa := make([]byte, 3, 3+len(name))
	le.PutUint16(sa, unix.AF_UNIX)
	return append(sa, name...)
}

// memBase is where fakeMemory's bytes start: lower addresses fault.
const memBase = 0x1000

// fakeMemory is a command's address space for readMessage: one mapped
// range at memBase. It counts what it is asked for.
type fakeMemory struct {
	b              []byte
	asked, largest int
	negative       bool
}

func (m *fakeMemory) read(addr uint64, n int) ([]byte, error) {
	if n < 0 {
		m.negative = true
		return nil, unix.EINVAL
	}
	m.asked += n
	m.largest = max(m.largest, n)
	if addr < memBase || addr-memBase > uint64(len(m.b)) || uint64(n) > uint64(len(m.b))-(addr-memBase) {
		return nil, unix.EFAULT
	}
	off := addr - memBase
	return append([]byte(nil), m.b[off:off+uint64(n)]...), nil
}

// at is the command's address of offset off of the memory.
func at(off int) uint64 { return memBase + uint64(off) }

// layMessage lays out, as a C program would, a struct msghdr at offset 0
// whose address is name, whose data is chunks (one iovec each) and whose
// control messages are control; empty ones get a NULL pointer.
func layMessage(name []byte, chunks [][]byte, control []byte) *fakeMemory {
	m := &fakeMemory{b: make([]byte, msghdrSize)}
	place := func(b []byte) uint64 {
		if len(b) == 0 {
			return 0
		}
		off := len(m.b)
		m.b = append(m.b, b...)
		return at(off)
	}
	namePtr := place(name)
	iov := make([]byte, 16*len(chunks))
	for i, c := range chunks {
		p := place(c)
		le.PutUint64(iov[16*i:], p)
		le.PutUint64(iov[16*i+8:], uint64(len(c)))
	}
	iovPtr, ctlPtr := place(iov), place(control)
	h := m.b[:msghdrSize]
	le.PutUint64(h[0:], namePtr)
	le.PutUint32(h[8:], uint32(len(name)))
	le.PutUint64(h[16:], iovPtr)
	le.PutUint64(h[24:], uint64(len(chunks)))
	le.PutUint64(h[32:], ctlPtr)
	le.PutUint64(h[40:], uint64(len(control)))
	return m
}

// cmsg is one control message as CMSG_SPACE lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	le.PutUint64(b, uint64(unix.CmsgLen(len(data))))
	le.PutUint32(b[8:], uint32(level))
	le.PutUint32(b[12:], uint32(typ))
	copy(b[unix.SizeofCmsghdr:], data)
	return b
}

// diagEntry is one socket file of a UNIX_DIAG dump.
type diagEntry struct{ dev, ino uint32 }

// nlmsg is one netlink message of type typ, padded to 4 bytes.
func nlmsg(typ uint16, payload []byte) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload)+3)
	le.PutUint32(b, uint32(unix.NLMSG_HDRLEN+len(payload)))
	le.PutUint16(b[4:], typ)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// nlattr is one attribute, padded to 4 bytes.
func nlattr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	le.PutUint16(b, uint16(4+len(data)))
	le.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// diagReply is a datagram of a dump answering UDIAG_SHOW_VFS: one
// message per entry, with an attribute of another type (of an odd length)
// before its UNIX_DIAG_VFS, then NLMSG_DONE when done.
func diagReply(entries []diagEntry, done bool) []byte {
	var out []byte
	for _, e := range entries {
		p := make([]byte, diagMsgSize)
		p[0] = unix.AF_UNIX
		p = append(p, nlattr(0 /* UNIX_DIAG_NAME */, []byte("/x"))...)
		vfs := make([]byte, 8)
		le.PutUint32(vfs, e.ino)
		le.PutUint32(vfs[4:], e.dev)
		p = append(p, nlattr(unixDiagVFS, vfs)...)
		out = append(out, nlmsg(unix.SOCK_DIAG_BY_FAMILY, p)...)
	}
	if done {
		out = append(out, nlmsg(unix.NLMSG_DONE, make([]byte, 4))...)
	}
	return out
}

// collect runs parseDiagReply, stopping after stop entries (0: never).
func collect(buf []byte, stop int) ([]diagEntry, bool, error) {
	got, _, done, err := collectNames(buf, stop)
	return got, done, err
}

// collectNames is collect, with each entry's name ("-": none).
func collectNames(buf []byte, stop int) ([]diagEntry, []string, bool, error) {
	var got []diagEntry
	var names []string
	done, err := parseDiagReply(buf, func(dev, ino uint32, name []byte) bool {
		got = append(got, diagEntry{dev, ino})
		if name == nil {
			names = append(names, "-")
		} else {
			names = append(names, string(name))
		}
		return stop == 0 || len(got) < stop
	})
	return got, names, done, err
}

func errnoIs(err error, e unix.Errno) bool { return errors.Is(err, e) }
