package seccomp

// The calls the Landlock backend's chain supervisor (the init stage's
// chain_linux.go) is notified of: every call that makes, removes or
// renames a directory entry, opens for writing (a file made by the
// supervisor has no Landlock grant of its own), and truncate by path;
// with reads, every open (what it makes has no read grant either, where a
// hidden path lies beneath a writable directory).
// openat2 needs no entry: the first program refuses it (ENOSYS), and libc
// falls back to openat. io_uring is refused there too.

// ChainNotify are the chain supervisor's calls for BuildNotify: open and
// openat only with a flag that writes or creates, unless reads (every
// open: the supervisor opens for reading too).
func ChainNotify(reads bool) []Notify {
	var out []Notify
	for _, name := range []string{"open", "openat", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
		"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat",
		"symlink", "symlinkat", "truncate"} {
		n := Notify{Syscall: name}
		switch {
		case reads:
		case name == "open":
			n.Arg, n.Mask = 1, OpenWriteFlags
		case name == "openat":
			n.Arg, n.Mask = 2, OpenWriteFlags
		}
		out = append(out, n)
	}
	return out
}

// Number is the number of the system call name on a (false: a has none,
// as arm64 has only the *at forms).
func (a Arch) Number(name string) (int, bool) {
	nums, ok := sysnum[name]
	if !ok || nums[a.column] == absent {
		return 0, false
	}
	return int(nums[a.column]), true
}
