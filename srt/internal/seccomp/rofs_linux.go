package seccomp

// The calls the Landlock backend's read-only supervisor (the init stage's
// rofs_linux.go) is notified of: every call that writes a directory
// entry or opens for writing (the chain supervisor's, ChainNotify), which
// it answers EROFS where the rules refuse the write, as bubblewrap's
// read-only mounts do, and lets run otherwise (Landlock decides); and the
// calls that change a file's metadata, which Landlock does not cover
// (mode, owner, times, extended attributes, by path and by descriptor),
// which it performs itself where the rules allow them; and access(2)
// asking about writes (W_OK), answered EROFS where the rules refuse a
// write of the file, as on a read-only mount (programs ask before they
// write: GnuPG opens its keyrings read-only then, without locking).

// ROFSMetaCalls are the calls that change metadata.
var ROFSMetaCalls = []string{"chmod", "fchmodat", "fchmodat2", "fchmod",
	"chown", "lchown", "fchownat", "fchown",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat"}

// AccessCall is a call of the access family: where its path, directory
// descriptor (-1: none), mode and flags (-1: none) are.
type AccessCall struct {
	Name                     string
	DirFD, Path, Mode, Flags int
}

// ROFSAccessCalls are the calls that ask whether a file may be written,
// notified only when the mode has W_OK.
var ROFSAccessCalls = []AccessCall{
	{Name: "access", DirFD: -1, Path: 0, Mode: 1, Flags: -1},
	{Name: "faccessat", DirFD: 0, Path: 1, Mode: 2, Flags: -1},
	{Name: "faccessat2", DirFD: 0, Path: 1, Mode: 2, Flags: 3},
}

const wOK = 2

// ROFSNotify are the read-only supervisor's calls for BuildNotify: those
// of ChainNotify without reads (open and openat only with a flag that
// writes or creates), ROFSMetaCalls, and ROFSAccessCalls with W_OK.
func ROFSNotify() []Notify {
	out := ChainNotify(false)
	for _, name := range ROFSMetaCalls {
		out = append(out, Notify{Syscall: name})
	}
	for _, a := range ROFSAccessCalls {
		out = append(out, Notify{Syscall: a.Name, Arg: a.Mode, Mask: wOK})
	}
	return out
}
