package unixgate

import (
	"bytes"
	"encoding/binary"
	"syscall"

	"golang.org/x/sys/unix"
)

// From include/uapi/linux/unix_diag.h.
const (
	udiagShowName = 0x1 // UDIAG_SHOW_NAME
	udiagShowVFS  = 0x2 // UDIAG_SHOW_VFS
	unixDiagName  = 0   // UNIX_DIAG_NAME
	unixDiagVFS   = 1   // UNIX_DIAG_VFS
	diagMsgSize   = 16  // struct unix_diag_msg
)

// boundInside says whether st is the file of a Unix socket bound in this
// process's network namespace, the sandbox's: sock_diag (NETLINK_SOCK_DIAG,
// UNIX_DIAG with UDIAG_SHOW_VFS) lists the device and inode of every socket
// file bound there, and sockets of the host are bound in the host's
// namespace. sock_diag reports the inode number in 32 bits: a file whose
// number does not fit is never taken for one (fail closed), and one that
// fits is matched exactly. Any failure answers false.
func boundInside(st unix.Stat_t) bool {
	if st.Ino>>32 != 0 {
		return false
	}
	found := false
	err := dumpVFS(func(dev, ino uint32, _ []byte) bool {
		// The kernel's dev_t: 12 bits of major above 20 of minor.
		if uint64(ino) == st.Ino && unix.Major(st.Dev) == dev>>20 && unix.Minor(st.Dev) == dev&0xfffff {
			found = true
			return false
		}
		return true
	})
	return err == nil && found
}

// BoundAs returns the address (the path, as given to bind) of the Unix
// socket of this network namespace whose file is (dev, ino), and whether
// there is one. sock_diag reports the inode number in 32 bits: a file
// whose number does not fit is matched on its low 32 bits, so a name
// found may be another socket's (srt compares it with the path it expects
// and refuses on a difference).
func BoundAs(dev, ino uint64) (name string, found bool, err error) {
	err = dumpVFS(func(d, i uint32, n []byte) bool {
		if uint64(i) == ino&0xffffffff && unix.Major(dev) == d>>20 && unix.Minor(dev) == d&0xfffff {
			name, found = string(n), true
			return false
		}
		return true
	})
	return name, found, err
}

// dumpVFS calls f with the (device, inode) of each socket file bound in
// this network namespace, and the address it was bound to, until f
// returns false.
func dumpVFS(f func(dev, ino uint32, name []byte) bool) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	req := make([]byte, unix.NLMSG_HDRLEN+24)
	le := binary.LittleEndian
	le.PutUint32(req[0:], uint32(len(req)))
	le.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	le.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	le.PutUint32(req[8:], 1)
	b := req[unix.NLMSG_HDRLEN:]
	b[0] = unix.AF_UNIX             // sdiag_family
	le.PutUint32(b[4:], ^uint32(0)) // udiag_states: all
	le.PutUint32(b[12:], udiagShowVFS|udiagShowName)
	le.PutUint32(b[16:], ^uint32(0)) // cookie: none
	le.PutUint32(b[20:], ^uint32(0))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		done, err := parseDiagReply(buf[:n], f)
		if done || err != nil {
			return err
		}
	}
}

// parseDiagReply reads one datagram of a UNIX_DIAG dump and calls f with
// the (device, inode) of each message's UNIX_DIAG_VFS attribute and its
// UNIX_DIAG_NAME up to its first NUL (nil: none), until f returns false. done says the dump is over (NLMSG_DONE, or f stopped it); an
// NLMSG_ERROR is its errno (EIO if it has none). A malformed message is
// EINVAL; a malformed attribute ends its message's attributes.
func parseDiagReply(buf []byte, f func(dev, ino uint32, name []byte) bool) (done bool, err error) {
	le := binary.LittleEndian
	msgs, err := syscall.ParseNetlinkMessage(buf)
	if err != nil {
		return false, err
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(m.Data) >= 4 {
				if e := int32(le.Uint32(m.Data)); e != 0 {
					return true, unix.Errno(-e)
				}
			}
			return true, unix.EIO
		}
		if len(m.Data) < diagMsgSize {
			continue
		}
		attrs := m.Data[diagMsgSize:]
		var dev, ino uint32
		var name []byte
		vfs := false
		for len(attrs) >= 4 {
			l, t := int(le.Uint16(attrs)), le.Uint16(attrs[2:])
			if l < 4 || l > len(attrs) {
				break
			}
			switch {
			case t == unixDiagVFS && l >= 12:
				dev, ino, vfs = le.Uint32(attrs[8:]), le.Uint32(attrs[4:]), true
			case t == unixDiagName:
				name = attrs[4:l]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
			}
			if a := (l + 3) &^ 3; a < len(attrs) {
				attrs = attrs[a:]
			} else {
				attrs = nil // the last one, its padding cut off
			}
		}
		if vfs && !f(dev, ino, name) {
			return true, nil
		}
	}
	return false, nil
}
