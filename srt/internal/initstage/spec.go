package initstage

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Flag is argv[1] of the init stage, with the version of this argv format:
// srt and the init stage it starts must agree on it.
const Flag = "--srt-init-stage=v2"

// Descriptor numbers inside the sandbox. srt passes them as extra files in
// this order.
const (
	// ChannelFD is one end of a Unix stream socket pair shared with srt.
	// srt sends one byte per signal to forward; the init stage sends the
	// Msg* messages. End-of-file means srt is gone.
	ChannelFD = 3
	// ExeFD is the init stage's executable, which bubblewrap starts.
	ExeFD = 4
)

// Messages from the init stage to srt on the channel.
const (
	// MsgStarted: the command has started.
	MsgStarted = 'R'
	// MsgExited is followed by one byte, the command's exit status; when
	// it is sent, nothing of the sandbox runs any more, and every
	// MsgViolation has been sent.
	MsgExited = 'X'
	// MsgViolation is followed by two bytes, big-endian, the length n
	// (1 to MaxViolation) of the line that follows: a violation the init
	// stage saw ("deny unix-connect /path"), which srt records as the
	// command's.
	MsgViolation = 'V'
	// MsgListening is followed by two bytes, a port (big-endian): a
	// server of the sandbox listens there now (Spec.WatchListeners).
	MsgListening = 'L'
	// MsgConnected answers a CtlConnect: two bytes, the port, then two
	// bytes, an errno (big-endian). With errno 0 the connected socket
	// comes with the message (SCM_RIGHTS, on its first byte).
	MsgConnected = 'P'
)

// MaxViolation bounds a MsgViolation's line, in bytes.
const MaxViolation = 4096

// Messages from srt to the init stage on the channel. Every other byte is
// a signal to forward (1 to 64).
const (
	// CtlNetworkReady lets the command start (Spec.WaitNetwork).
	CtlNetworkReady = 0
	// CtlConnect is followed by two bytes, a port (big-endian): the init
	// stage connects to that port on the sandbox's loopback (127.0.0.1,
	// else ::1) and answers MsgConnected (network.exposeLoopbackPorts).
	CtlConnect = 0xC0
)

// StdioNames name the descriptors the command inherits, by number, in
// messages (the init stage's stdio checks, and srt's).
var StdioNames = [...]string{"standard input", "standard output", "standard error"}

// ExePath is where the init stage's executable is found inside the sandbox.
var ExePath = "/proc/self/fd/" + strconv.Itoa(ExeFD)

// Spec is what the init stage applies to itself, and so to everything it
// starts, before it starts the command.
type Spec struct {
	// BlockUnixSockets refuses socket(AF_UNIX), socket(AF_VSOCK) and
	// datagram socketpair(AF_UNIX) (seccomp). io_uring, the keyrings and
	// set-id modes are refused always.
	BlockUnixSockets bool
	// UnixSockets, when not empty (and BlockUnixSockets is not set), lets
	// the command make Unix sockets and reach, of the sockets of the host,
	// those at these paths or beneath these directories (a pinned entry:
	// only the socket file pinned): the init stage supervises connect,
	// sendto, sendmsg and sendmmsg (seccomp user notification) and
	// performs them itself (see package unixgate). Sockets bound inside
	// the sandbox stay reachable; a refusal is reported on the channel
	// (MsgViolation).
	UnixSockets []UnixSocket
	// BlockNamespaces refuses new user and mount namespaces, setns and
	// every mount system call (seccomp).
	BlockNamespaces bool
	// Landlock limits writes to beneath WritePaths, where the kernel has
	// Landlock, and refuses connecting to abstract Unix sockets bound
	// outside the sandbox (Landlock ABI 6+).
	Landlock   bool
	WritePaths []string
	// LandlockScopeOnly, with Landlock, applies the abstract-socket scope
	// alone and no write limit (WritePaths are ignored): a nested sandbox
	// cannot live under Landlock's write limit, which forbids changing
	// mounts (allowNestedUserNamespaces).
	LandlockScopeOnly bool
	// RequireLandlock makes a kernel without Landlock fatal
	// (requireLandlock) rather than a debug line.
	RequireLandlock bool
	// WaitNetwork makes the init stage start the command only once srt
	// sends CtlNetworkReady: the network namespace's capture rules are in
	// place (or failed, which srt reports).
	WaitNetwork bool
	// DevNullFD, when positive, is a descriptor number the command gets
	// /dev/null on, read-only (the slot of srt's --control-fd).
	DevNullFD int
	// WatchListeners makes the init stage report each TCP port a server
	// of the sandbox starts listening on, on its loopback or every
	// address (MsgListening), but for IgnorePorts (srt's own).
	WatchListeners bool
	IgnorePorts    []int
	// PassFDs are descriptors the command gets at a number of its choice
	// (srt --pass-fd): From is the number the init stage inherits it at,
	// To the command's (3–8).
	PassFDs []PassFD
	// CheckMounts makes the init stage refuse to start the command when a
	// writable mount of one of the host's filesystems (HostDevs, as
	// unix.Mkdev makes them) has a root that is not one of Writable, the
	// files srt granted (see checkMounts).
	CheckMounts bool
	HostDevs    []uint64
	Writable    []FileID
	// ObserveFD, when positive, is a descriptor holding the filesystem
	// rules (FSRules.Encode): the init stage then reports, as
	// MsgViolation, each write the rules refuse (and, with ObserveReads,
	// each open of a path they hide) that the command attempts
	// (--report-filesystem-violations; see fsobserve_linux.go).
	ObserveFD    int
	ObserveReads bool
	// Rlimits are set on the command, not on the init stage: it starts
	// the command through a re-exec of itself (RlimitFlag) that sets them
	// and then execs the command, so that the init stage's own threads
	// and descriptors stay outside the bounds (package limits).
	Rlimits []Rlimit
	// NoNS is the Landlock backend's mode: no namespaces (nons.go).
	NoNS NoNS
}

// Rlimit is one resource limit: Name is one of RlimitNames.
type Rlimit struct {
	Name     string
	Cur, Max uint64
}

// RlimitNames are the resources an Rlimit may name: RLIMIT_NPROC,
// RLIMIT_DATA, RLIMIT_NOFILE and RLIMIT_CPU.
var RlimitNames = []string{"nproc", "data", "nofile", "cpu"}

// PassFD moves the inherited descriptor From to To in the command.
type PassFD struct{ From, To int }

// PassName names descriptor n of the command, given with --pass-fd, in
// messages.
func PassName(n int) string {
	return "descriptor " + strconv.Itoa(n) + " (--pass-fd " + strconv.Itoa(n) + ")"
}

// FileID identifies a file: its device (as unix.Mkdev makes it, and as
// stat(2) reports it) and inode numbers.
type FileID struct{ Dev, Ino uint64 }

// UnixSocket is one entry of network.allowUnixSockets as the init stage
// compares it.
type UnixSocket struct {
	// Path is absolute, without symlinks: a socket file there, or beneath
	// it when it is a directory, may be reached.
	Path string
	// Pinned: the command could put another socket at Path (a directory
	// on the way is writable in the sandbox), so only the socket file ID,
	// with the change time Changed (ns since the epoch: an inode number
	// freed and given to a new file is another file), may be reached
	// there, the one srt found when it made the command; with ID nil there
	// was none, and no host socket may be reached there.
	Pinned  bool
	ID      *FileID
	Changed int64
}

// String is the entry as -unix-socket takes it: PATH, DEV:INO:CTIME:PATH
// (pinned) or none:PATH (pinned, nothing there).
func (u UnixSocket) String() string {
	switch {
	case !u.Pinned:
		return u.Path
	case u.ID == nil:
		return "none:" + u.Path
	}
	return strconv.FormatUint(u.ID.Dev, 10) + ":" + strconv.FormatUint(u.ID.Ino, 10) + ":" + strconv.FormatInt(u.Changed, 10) + ":" + u.Path
}

// parseUnixSocket reads a -unix-socket value (see UnixSocket.String).
func parseUnixSocket(v string) (UnixSocket, error) {
	bad := errors.New("-unix-socket needs an absolute path, DEV:INO:CTIME:PATH or none:PATH")
	if strings.HasPrefix(v, "/") {
		return UnixSocket{Path: v}, nil
	}
	if p, ok := strings.CutPrefix(v, "none:"); ok {
		if !strings.HasPrefix(p, "/") {
			return UnixSocket{}, bad
		}
		return UnixSocket{Path: p, Pinned: true}, nil
	}
	dev, rest, ok1 := strings.Cut(v, ":")
	ino, rest, ok2 := strings.Cut(rest, ":")
	ctime, p, ok3 := strings.Cut(rest, ":")
	d, err1 := strconv.ParseUint(dev, 10, 64)
	n, err2 := strconv.ParseUint(ino, 10, 64)
	c, err3 := strconv.ParseInt(ctime, 10, 64)
	if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || err3 != nil || !strings.HasPrefix(p, "/") {
		return UnixSocket{}, bad
	}
	return UnixSocket{Path: p, Pinned: true, ID: &FileID{Dev: d, Ino: n}, Changed: c}, nil
}

// Args is the init stage's argv (after the executable), ending with the
// command to run. It is plain words, cheap to parse: the init stage is on
// the path of every command's start.
func Args(s Spec, command []string) []string {
	a := []string{Flag}
	if s.BlockUnixSockets {
		a = append(a, "-block-unix-sockets")
	}
	for _, u := range s.UnixSockets {
		a = append(a, "-unix-socket", u.String())
	}
	if s.BlockNamespaces {
		a = append(a, "-block-namespaces")
	}
	if s.Landlock {
		a = append(a, "-landlock")
		for _, p := range s.WritePaths {
			a = append(a, "-write", p)
		}
		if s.LandlockScopeOnly {
			a = append(a, "-landlock-scope-only")
		}
	}
	if s.RequireLandlock {
		a = append(a, "-require-landlock")
	}
	if s.WaitNetwork {
		a = append(a, "-wait-network")
	}
	if s.DevNullFD > 0 {
		a = append(a, "-devnull-fd", strconv.Itoa(s.DevNullFD))
	}
	if s.WatchListeners {
		a = append(a, "-watch-listeners")
		for _, p := range s.IgnorePorts {
			a = append(a, "-ignore-port", strconv.Itoa(p))
		}
	}
	for _, p := range s.PassFDs {
		a = append(a, "-pass-fd", strconv.Itoa(p.From)+":"+strconv.Itoa(p.To))
	}
	if s.CheckMounts {
		a = append(a, "-check-mounts")
		for _, d := range s.HostDevs {
			a = append(a, "-host-dev", strconv.FormatUint(d, 10))
		}
		for _, id := range s.Writable {
			a = append(a, "-writable", strconv.FormatUint(id.Dev, 10)+":"+strconv.FormatUint(id.Ino, 10))
		}
	}
	if s.ObserveFD > 0 {
		a = append(a, "-observe-fd", strconv.Itoa(s.ObserveFD))
		if s.ObserveReads {
			a = append(a, "-observe-reads")
		}
	}
	for _, r := range s.Rlimits {
		a = append(a, "-rlimit", r.String())
	}
	a = append(a, s.NoNS.args()...)
	a = append(a, "--")
	return append(a, command...)
}

func parseArgs(args []string) (Spec, []string, error) {
	var s Spec
	if len(args) == 0 || args[0] != Flag {
		return s, nil, errors.New("this init stage speaks " + Flag + "; srt and its init stage come from different versions")
	}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-block-unix-sockets":
			s.BlockUnixSockets = true
		case "-block-namespaces":
			s.BlockNamespaces = true
		case "-landlock":
			s.Landlock = true
		case "-landlock-scope-only":
			s.LandlockScopeOnly = true
		case "-require-landlock":
			s.RequireLandlock = true
		case "-wait-network":
			s.WaitNetwork = true
		case "-check-mounts":
			s.CheckMounts = true
		case "-observe-reads":
			s.ObserveReads = true
		case "-host-dev", "-writable":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			if err := s.parseID(args[i], args[i+1]); err != nil {
				return s, nil, err
			}
			i++
		case "-watch-listeners":
			s.WatchListeners = true
		case "-ignore-port":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 1 || n > 65535 {
				return s, nil, errors.New("bad -ignore-port " + strconv.Quote(args[i+1]))
			}
			s.IgnorePorts = append(s.IgnorePorts, n)
			i++
		case "-pass-fd":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			from, to, ok := strings.Cut(args[i+1], ":")
			f, err1 := strconv.Atoi(from)
			t, err2 := strconv.Atoi(to)
			if !ok || err1 != nil || err2 != nil || f < 3 || t < 3 {
				return s, nil, errors.New("bad -pass-fd " + strconv.Quote(args[i+1]))
			}
			s.PassFDs = append(s.PassFDs, PassFD{From: f, To: t})
			i++
		case "-rlimit":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			r, err := ParseRlimit(args[i+1])
			if err != nil {
				return s, nil, err
			}
			s.Rlimits = append(s.Rlimits, r)
			i++
		case "-unix-socket":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			u, err := parseUnixSocket(args[i+1])
			if err != nil {
				return s, nil, err
			}
			s.UnixSockets = append(s.UnixSockets, u)
			i++
		case "-write", "-devnull-fd", "-observe-fd":
			if i+1 == len(args) {
				return s, nil, errors.New(args[i] + " needs a value")
			}
			opt, val := args[i], args[i+1]
			i++
			switch opt {
			case "-write":
				s.WritePaths = append(s.WritePaths, val)
			default:
				n, err := strconv.Atoi(val)
				if err != nil || n < 3 {
					return s, nil, errors.New("bad " + opt + " " + strconv.Quote(val))
				}
				if opt == "-observe-fd" {
					s.ObserveFD = n
				} else {
					s.DevNullFD = n
				}
			}
		case "--":
			if i+1 == len(args) {
				return s, nil, errors.New("no command")
			}
			return s, args[i+1:], nil
		default:
			n, err := s.NoNS.parse(args, i)
			if err != nil {
				return s, nil, err
			}
			if n == 0 {
				return s, nil, errors.New("unknown option " + strconv.Quote(args[i]))
			}
			i += n - 1
		}
	}
	return s, nil, errors.New("no command")
}

// parseID reads the value of -host-dev (a number) or -writable (DEV:INO).
func (s *Spec) parseID(opt, val string) error {
	bad := errors.New("bad " + opt + " " + strconv.Quote(val))
	if opt == "-host-dev" {
		d, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return bad
		}
		s.HostDevs = append(s.HostDevs, d)
		return nil
	}
	dev, ino, ok := strings.Cut(val, ":")
	d, err1 := strconv.ParseUint(dev, 10, 64)
	n, err2 := strconv.ParseUint(ino, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return bad
	}
	s.Writable = append(s.Writable, FileID{Dev: d, Ino: n})
	return nil
}

// String is the limit as -rlimit takes it: NAME:CUR:MAX.
func (r Rlimit) String() string {
	return r.Name + ":" + strconv.FormatUint(r.Cur, 10) + ":" + strconv.FormatUint(r.Max, 10)
}

// ParseRlimit reads NAME:CUR:MAX.
func ParseRlimit(v string) (Rlimit, error) {
	bad := errors.New("bad -rlimit " + strconv.Quote(v))
	f := strings.Split(v, ":")
	if len(f) != 3 || !slices.Contains(RlimitNames, f[0]) {
		return Rlimit{}, bad
	}
	cur, err1 := strconv.ParseUint(f[1], 10, 64)
	max, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || cur > max {
		return Rlimit{}, bad
	}
	return Rlimit{Name: f[0], Cur: cur, Max: max}, nil
}
