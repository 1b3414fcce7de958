package seccomp

// The calls the Landlock backend's read-only supervisor (the init stage's
// rofs_linux.go) is notified of: every call that writes a directory
// entry or opens for writing (the chain supervisor's, ChainNotify), which
// it answers EROFS where the rules refuse the write, as bubblewrap's
// read-only mounts do, and lets run otherwise (Landlock decides); and the
// calls that change a file's metadata, which Landlock does not cover
// (mode, owner, times, extended attributes, by path and by descriptor),
// which it performs itself where the rules allow them.

// ROFSMetaCalls are the calls that change metadata.
var ROFSMetaCalls = []string{"chmod", "fchmodat", "fchmodat2", "fchmod",
	"chown", "lchown", "fchownat", "fchown",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat"}

// ROFSNotify are the read-only supervisor's calls for BuildNotify: those
// of ChainNotify without reads (open and openat only with a flag that
// writes or creates), and ROFSMetaCalls.
func ROFSNotify() []Notify {
	out := ChainNotify(false)
	for _, name := range ROFSMetaCalls {
		out = append(out, Notify{Syscall: name})
	}
	return out
}
