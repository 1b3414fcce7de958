package seccomp

// The filesystem observer (srt --report-filesystem-violations) adds its
// calls to the init stage's notifying filter (BuildNotify, beside the Unix
// socket supervisor's): it refuses nothing, and has the init stage notified
// of every call that names a path to write (and, with reads, of every
// open), which reads the path, answers CONTINUE and reports the ones the
// rules refuse. A call the filter Build makes refuses is never notified:
// the kernel takes the errno over the notification.
//
// What it cannot see: calls on a descriptor alone (ftruncate, fchmod,
// fchown, fsetxattr, write on a descriptor opened before), which name no
// path; openat2, which the first program refuses (ENOSYS), so callers use
// openat; io_uring, refused too.

// PathArg says where a call's path is: the argument holding the path, and
// the one holding the directory descriptor it is relative to (-1: the
// working directory).
type PathArg struct{ DirFD, Path int }

// ObservedCall is a call the observer notifies.
type ObservedCall struct {
	Name string
	// Paths are the paths the call writes (rename: both; link and
	// symlink: the new name only).
	Paths []PathArg
	// FlagsArg, for open and openat, is the argument holding the open
	// flags: the call writes when they share a bit with OpenWriteFlags,
	// and reads otherwise. -1: the call always writes.
	FlagsArg int
}

// OpenWriteFlags are the open flags that ask to write or create
// (include/uapi/asm-generic/fcntl.h): O_WRONLY, O_RDWR, O_CREAT, O_TRUNC
// and __O_TMPFILE. O_APPEND alone writes nothing.
const OpenWriteFlags = 0o1 | 0o2 | oCreat | 0o1000 | oTmpfile

func at(dirfd, path int) PathArg { return PathArg{DirFD: dirfd, Path: path} }

func cwd(path int) PathArg { return PathArg{DirFD: -1, Path: path} }

// observedCalls are the calls the observer notifies, one per syscall. A
// call the architecture lacks (arm64 has only the *at forms) is left out.
var observedCalls = []ObservedCall{
	{Name: "open", Paths: []PathArg{cwd(0)}, FlagsArg: 1},
	{Name: "openat", Paths: []PathArg{at(0, 1)}, FlagsArg: 2},
	{Name: "creat", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "mkdir", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "mkdirat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "mknod", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "mknodat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "unlink", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "unlinkat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "rmdir", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "rename", Paths: []PathArg{cwd(0), cwd(1)}, FlagsArg: -1},
	{Name: "renameat", Paths: []PathArg{at(0, 1), at(2, 3)}, FlagsArg: -1},
	{Name: "renameat2", Paths: []PathArg{at(0, 1), at(2, 3)}, FlagsArg: -1},
	{Name: "link", Paths: []PathArg{cwd(1)}, FlagsArg: -1},
	{Name: "linkat", Paths: []PathArg{at(2, 3)}, FlagsArg: -1},
	{Name: "symlink", Paths: []PathArg{cwd(1)}, FlagsArg: -1},
	{Name: "symlinkat", Paths: []PathArg{at(1, 2)}, FlagsArg: -1},
	{Name: "truncate", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "chmod", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "fchmodat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "fchmodat2", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "chown", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "lchown", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "fchownat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "utime", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "utimes", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "futimesat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	// a NULL path makes it futimens on the descriptor: nothing to report
	{Name: "utimensat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "setxattr", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "lsetxattr", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "removexattr", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "lremovexattr", Paths: []PathArg{cwd(0)}, FlagsArg: -1},
	{Name: "setxattrat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
	{Name: "removexattrat", Paths: []PathArg{at(0, 1)}, FlagsArg: -1},
}

// Observed returns the observed call with number nr on a.
func Observed(a Arch, nr int32) (ObservedCall, bool) {
	for _, c := range observedCalls {
		if n := sysnum[c.Name][a.column]; n != absent && int32(n) == nr {
			return c, true
		}
	}
	return ObservedCall{}, false
}

// ObservedCalls returns the observed calls a has, by number.
func ObservedCalls(a Arch) map[int32]ObservedCall {
	out := map[int32]ObservedCall{}
	for _, c := range observedCalls {
		if n := sysnum[c.Name][a.column]; n != absent {
			out[int32(n)] = c
		}
	}
	return out
}

// ObserverNotify are the observer's calls for BuildNotify: open and openat
// only with a flag that writes, unless reads.
func ObserverNotify(reads bool) []Notify {
	var out []Notify
	for _, c := range observedCalls {
		n := Notify{Syscall: c.Name}
		if c.FlagsArg >= 0 && !reads {
			n.Arg, n.Mask = c.FlagsArg, OpenWriteFlags
		}
		out = append(out, n)
	}
	return out
}
