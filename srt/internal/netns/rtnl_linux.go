package netns

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The helper configures its namespace's loopback interface with a few
// rtnetlink requests of its own: the three it needs do not warrant a
// netlink library on the start-up path of every sandbox.

// loIndex is the loopback interface's index, 1 in every namespace.
const loIndex = 1

// loUp brings the loopback interface up.
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// rtnl is a route netlink socket.
type rtnl struct {
	fd  int
	seq uint32
}

func openRtnl() (*rtnl, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &rtnl{fd: fd}, nil
}

func (r *rtnl) close() { unix.Close(r.fd) }

// attr appends one rtattr.
func attr(b []byte, typ uint16, data []byte) []byte {
	l := unix.SizeofRtAttr + len(data)
	var h [unix.SizeofRtAttr]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(l))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(b, h[:]...)
	b = append(b, data...)
	for len(b)%unix.NLMSG_ALIGNTO != 0 {
		b = append(b, 0)
	}
	return b
}

// do sends one request and waits for its acknowledgement.
func (r *rtnl) do(typ uint16, flags uint16, body []byte) error {
	r.seq++
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	msg = append(msg, body...)
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], typ)
	binary.NativeEndian.PutUint16(msg[6:], flags|unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], r.seq)
	if err := unix.Sendto(r.fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= unix.SizeofNlMsghdr; {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			typ := binary.NativeEndian.Uint16(b[4:])
			seq := binary.NativeEndian.Uint32(b[8:])
			if l < unix.SizeofNlMsghdr || l > len(b) {
				return fmt.Errorf("netlink: malformed reply")
			}
			data := b[unix.SizeofNlMsghdr:l]
			if seq == r.seq && typ == unix.NLMSG_ERROR {
				if len(data) < 4 {
					return fmt.Errorf("netlink: short error message")
				}
				if code := int32(binary.NativeEndian.Uint32(data)); code != 0 {
					return unix.Errno(-code)
				}
				return nil
			}
			b = b[min(len(b), (l+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1)):]
		}
	}
}

func family(a netip.Addr) uint8 {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

// addAddr adds a host address (/32, /128) to the loopback interface,
// without duplicate address detection for IPv6.
func (r *rtnl) addAddr(a netip.Addr) error {
	ifa := unix.IfAddrmsg{Family: family(a), Prefixlen: uint8(a.BitLen()), Scope: unix.RT_SCOPE_UNIVERSE, Index: loIndex}
	if a.Is6() {
		ifa.Flags = unix.IFA_F_NODAD
	}
	body := unsafe.Slice((*byte)(unsafe.Pointer(&ifa)), unix.SizeofIfAddrmsg)
	body = append([]byte(nil), body...)
	body = attr(body, unix.IFA_LOCAL, a.AsSlice())
	body = attr(body, unix.IFA_ADDRESS, a.AsSlice())
	if err := r.do(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_EXCL, body); err != nil {
		return fmt.Errorf("address %s on lo: %w", a, err)
	}
	return nil
}

// route adds (or, with del, removes) the default route of src's family
// through the loopback interface with src as the source address: every
// destination is then reached through lo, where the capture rules take it.
func (r *rtnl) route(src netip.Addr, del bool) error {
	rt := unix.RtMsg{Family: family(src), Table: unix.RT_TABLE_MAIN, Protocol: unix.RTPROT_BOOT, Scope: unix.RT_SCOPE_LINK, Type: unix.RTN_UNICAST}
	body := append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&rt)), unix.SizeofRtMsg)...)
	var oif [4]byte
	binary.NativeEndian.PutUint32(oif[:], loIndex)
	body = attr(body, unix.RTA_OIF, oif[:])
	body = attr(body, unix.RTA_PREFSRC, src.AsSlice())
	typ, flags := uint16(unix.RTM_NEWROUTE), uint16(unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	if del {
		typ, flags = unix.RTM_DELROUTE, 0
	}
	if err := r.do(typ, flags, body); err != nil {
		return fmt.Errorf("default route via lo (%s): %w", src, err)
	}
	return nil
}
