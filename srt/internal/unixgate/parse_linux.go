package unixgate

// The parsers of what a supervised call hands over. Each is a pure
// function of bytes copied from the command (readMessage of the command's
// memory as read gives it), so that each is fuzzed on its own
// (fuzz_linux_test.go); the handlers in gate_linux.go do the I/O.

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The kernel's sizes (include/uapi/linux/un.h, include/net/scm.h).
const (
	sunPathMax     = 108            // sizeof(sun_path)
	sockaddrUnSize = 2 + sunPathMax // sizeof(struct sockaddr_un)
	scmMaxFD       = 253            // SCM_MAX_FD: descriptors one message may pass
)

// addrKind is what a Unix socket address names.
type addrKind int

const (
	// addrOther: not a Unix address (another family, or too short to say):
	// passed on as given, the kernel judges it on the copy.
	addrOther addrKind = iota
	// addrUnnamed: sun_family alone (the kernel refuses it for connect
	// and send).
	addrUnnamed
	// addrAbstract: sun_path[0] is NUL; the name is every byte of
	// sun_path the length covers, NULs included.
	addrAbstract
	// addrPath: a filesystem path, up to the first NUL or the length.
	addrPath
)

// parseUnixAddr reads a socket address given to a Unix socket, as the
// kernel's unix_validate_addr and unix_mkname_bsd do: a Unix address
// longer than struct sockaddr_un is EINVAL; a path ends at its first NUL
// or at the length (108 bytes without a NUL is a whole path). name is the
// path (addrPath) or sun_path (addrAbstract), a slice of sa.
func parseUnixAddr(sa []byte) (kind addrKind, name []byte, e unix.Errno) {
	if len(sa) < 2 || binary.LittleEndian.Uint16(sa) != unix.AF_UNIX {
		return addrOther, nil, 0
	}
	if len(sa) > sockaddrUnSize {
		return addrOther, nil, unix.EINVAL
	}
	path := sa[2:]
	switch {
	case len(path) == 0:
		return addrUnnamed, nil, 0
	case path[0] == 0:
		return addrAbstract, path, 0
	}
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	return addrPath, path, 0
}

// msghdr is struct msghdr as the command laid it out (LP64).
type msghdr struct {
	name       uint64
	nameLen    uint32
	iov        uint64
	iovLen     uint64
	control    uint64
	controlLen uint64
}

// decodeMsghdr reads a struct msghdr; b has msghdrSize bytes at least.
func decodeMsghdr(b []byte) msghdr {
	le := binary.LittleEndian
	return msghdr{
		name: le.Uint64(b[0:]), nameLen: le.Uint32(b[8:]),
		iov: le.Uint64(b[16:]), iovLen: le.Uint64(b[24:]),
		control: le.Uint64(b[32:]), controlLen: le.Uint64(b[40:]),
	}
}

// span is a range of the command's memory to copy.
type span struct{ base, len uint64 }

// planIovecs reads an array of struct iovec (16 bytes each) and returns
// the ranges to copy for the data, empty ones left out, in order. A
// negative length is EINVAL; past maxData in all, a datagram is EMSGSIZE
// and a stream send (stream) is cut there (a short send).
func planIovecs(iov []byte, stream bool) ([]span, unix.Errno) {
	le := binary.LittleEndian
	var spans []span
	total := uint64(0)
	for i := 0; i+16 <= len(iov); i += 16 {
		base, l := le.Uint64(iov[i:]), le.Uint64(iov[i+8:])
		if int64(l) < 0 {
			return nil, unix.EINVAL
		}
		if total+l > maxData {
			if !stream {
				return nil, unix.EMSGSIZE
			}
			l = maxData - total
		}
		if l == 0 {
			continue
		}
		spans = append(spans, span{base, l})
		total += l
	}
	return spans, 0
}

// message is what one sendmsg sends: copies of its address, data and
// control messages.
type message struct{ name, data, control []byte }

// readMessage copies what the struct msghdr hdr points to with read (n
// bytes of the command's memory at addr; never asked for more than
// maxData at once, nor maxData+maxAddr+maxControl+16*maxIov in all), as
// the kernel's sendmsg would: the address cut at sizeof(struct
// sockaddr_storage), at most maxIov iovecs, the data as planIovecs says,
// the control messages up to maxControl.
func readMessage(hdr []byte, stream bool, read func(addr uint64, n int) ([]byte, error)) (message, error) {
	h := decodeMsghdr(hdr)
	var m message
	if h.name != 0 && h.nameLen != 0 {
		if int32(h.nameLen) < 0 {
			return m, unix.EINVAL
		}
		l := h.nameLen
		if l > maxAddr {
			l = maxAddr // the kernel cuts it there too
		}
		var err error
		if m.name, err = read(h.name, int(l)); err != nil {
			return m, err
		}
	}
	if h.iovLen > maxIov {
		return m, unix.EMSGSIZE
	}
	if h.iovLen > 0 {
		iov, err := read(h.iov, int(h.iovLen)*16)
		if err != nil {
			return m, err
		}
		spans, e := planIovecs(iov, stream)
		if e != 0 {
			return m, e
		}
		for _, s := range spans {
			b, err := read(s.base, int(s.len))
			if err != nil {
				return m, err
			}
			m.data = append(m.data, b...)
		}
	}
	if h.control != 0 && h.controlLen > 0 {
		if h.controlLen > maxControl {
			return m, unix.ENOBUFS
		}
		var err error
		if m.control, err = read(h.control, int(h.controlLen)); err != nil {
			return m, err
		}
	}
	return m, nil
}

// rightsSlots walks control messages as the kernel's __scm_send does and
// returns the offset of each descriptor an SCM_RIGHTS message passes (4
// bytes each), in order. The walk stops at a header that does not fit or
// whose cmsg_len is below the header's size or past the end: the kernel
// refuses that message (EINVAL) on the copy. More than SCM_MAX_FD
// descriptors in one message is EINVAL, as in the kernel, before any is
// duplicated.
func rightsSlots(control []byte) ([]int, unix.Errno) {
	le := binary.LittleEndian
	var slots []int
	for off := 0; off+unix.SizeofCmsghdr <= len(control); {
		l := le.Uint64(control[off:]) // cmsg_len, size_t
		if l < unix.SizeofCmsghdr || l > uint64(len(control)-off) {
			break
		}
		level, typ := int32(le.Uint32(control[off+8:])), int32(le.Uint32(control[off+12:]))
		if level == unix.SOL_SOCKET && typ == unix.SCM_RIGHTS {
			for p := off + unix.SizeofCmsghdr; p+4 <= off+int(l); p += 4 {
				if len(slots) == scmMaxFD {
					return nil, unix.EINVAL
				}
				slots = append(slots, p)
			}
		}
		off += cmsgAlign(int(l))
	}
	return slots, 0
}

func cmsgAlign(n int) int { return (n + 7) &^ 7 }
