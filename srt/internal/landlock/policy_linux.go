package landlock

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Policy is the whole of what the Landlock backend (a sandbox without
// namespaces) asks of Landlock: reads and writes by path, TCP by port, and
// the scopes. Unlike Rules it restricts reads too, and it never degrades:
// a part the kernel's ABI cannot enforce is an error (ErrTooOld), so the
// caller decides, before anything runs, what it does without it.
type Policy struct {
	// Paths are the grants: a path and its rights (ReadRights,
	// ListRights, WriteRights, or'ed).
	Paths []PathGrant
	// HandleReads restricts reading, listing and executing to the grants
	// (else they stay free).
	HandleReads bool
	// HandleNet restricts TCP connect and bind to ConnectPorts and
	// BindPorts (ABI 4).
	HandleNet    bool
	ConnectPorts []uint16
	BindPorts    []uint16
	// ScopeSignals and ScopeAbstractUnix (ABI 6).
	ScopeSignals, ScopeAbstractUnix bool
}

// PathGrant grants rights beneath Path (a directory) or on Path (a file).
type PathGrant struct {
	Path   string
	Rights Rights
}

// Rights of a PathGrant.
type Rights uint8

const (
	ReadRights  Rights = 1 << iota // read files, list directories, execute
	ListRights                     // list directories only
	WriteRights                    // every write right of the ABI
)

// The first ABIs with network rules and with scopes.
const (
	NetABI   = 4
	ScopeABI = scopeABI
)

// ErrTooOld is wrapped when the kernel's ABI lacks what a Policy asks.
var ErrTooOld = errors.New("the kernel's Landlock ABI is too old")

// readAccess is what HandleReads handles and ReadRights grants.
const readAccess = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_EXECUTE

// ruleNetPort is LANDLOCK_RULE_NET_PORT (x/sys/unix lacks it).
const ruleNetPort = 2

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	allowed uint64
	port    uint64
}

// ApplyPolicy restricts the calling thread, and everything it starts from
// now on, to p; the caller has locked its goroutine to the thread (see
// Rules.ThisThread) and set no_new_privs. It returns the ABI and the
// granted paths that did not exist (skipped).
func ApplyPolicy(p Policy) (abi int, skipped []string, err error) {
	abi, err = ABI()
	if err != nil {
		return 0, nil, err
	}
	if p.HandleNet && abi < NetABI {
		return abi, nil, fmt.Errorf("TCP rules need Landlock ABI %d (Linux 6.7), and this kernel has ABI %d: %w", NetABI, abi, ErrTooOld)
	}
	if (p.ScopeSignals || p.ScopeAbstractUnix) && abi < ScopeABI {
		return abi, nil, fmt.Errorf("scoping signals and abstract Unix sockets needs Landlock ABI %d (Linux 6.12), and this kernel has ABI %d: %w", ScopeABI, abi, ErrTooOld)
	}
	attr := rulesetAttr{handledFS: handledAccess(abi), scoped: scopes(abi, Rules{ScopeSignals: p.ScopeSignals, ScopeAbstractUnix: p.ScopeAbstractUnix})}
	if p.HandleReads {
		attr.handledFS |= readAccess
	}
	if p.HandleNet {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return abi, nil, fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	defer unix.Close(int(fd))
	for _, g := range p.Paths {
		added, err := grantPath(int(fd), g, abi, attr.handledFS)
		if err != nil {
			return abi, nil, err
		}
		if !added {
			skipped = append(skipped, g.Path)
		}
	}
	add := func(port uint16, right uint64) error {
		rule := netPortAttr{allowed: right, port: uint64(port)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock: allow TCP port %d: %w", port, errno)
		}
		return nil
	}
	if p.HandleNet {
		for _, port := range p.ConnectPorts {
			if err := add(port, unix.LANDLOCK_ACCESS_NET_CONNECT_TCP); err != nil {
				return abi, nil, err
			}
		}
		for _, port := range p.BindPorts {
			if err := add(port, unix.LANDLOCK_ACCESS_NET_BIND_TCP); err != nil {
				return abi, nil, err
			}
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return abi, nil, fmt.Errorf("landlock: restrict: %w", errno)
	}
	return abi, skipped, nil
}

// grantPath adds one grant. The path is opened without following a final
// symlink (a grant names what srt looked at, never where a link leads now);
// it reports false, with no error, when the path does not exist.
func grantPath(rulesetFD int, g PathGrant, abi int, handled uint64) (bool, error) {
	fd, err := unix.Open(g.Path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("landlock: open %q: %w", g.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("landlock: stat %q: %w", g.Path, err)
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return false, nil
	}
	var allowed uint64
	if g.Rights&ReadRights != 0 {
		allowed |= unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
		if dir {
			allowed |= unix.LANDLOCK_ACCESS_FS_READ_DIR
		}
	}
	if g.Rights&ListRights != 0 && dir {
		allowed |= unix.LANDLOCK_ACCESS_FS_READ_DIR
	}
	if g.Rights&WriteRights != 0 {
		if dir {
			allowed |= handledAccess(abi)
		} else {
			allowed |= fileAccess(abi)
		}
	}
	allowed &= handled
	if allowed == 0 {
		return true, nil
	}
	rule := pathBeneathAttr{allowed: allowed, parentFD: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return false, fmt.Errorf("landlock: grant on %q: %w", g.Path, errno)
	}
	return true, nil
}
