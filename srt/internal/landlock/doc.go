// Package landlock applies srt's second, independent write barrier: after
// Restrict, the process and every process it starts may write only beneath
// the listed directories and files.
//
// What it defends against. bubblewrap's read-only binds are the first write
// barrier; they are mount state, and mount state can be undone by anything
// that reaches CAP_SYS_ADMIN over the sandbox's mount namespace (a user
// namespace the seccomp filter failed to stop, a kernel bug, a misbuilt plan).
// Landlock is checked by the kernel on every path access, independent of
// mounts, uid 0 and capabilities, and cannot be lifted once applied: even if
// the mounts go, writes outside the allowed paths still fail with EACCES.
// With Rules.ScopeSignals the command also cannot signal processes outside the
// sandbox (srt itself, the proxy), and with Rules.ScopeAbstractUnix it cannot
// connect to abstract Unix sockets bound outside it (D-Bus, X11, containerd).
//
// What is handled. Restrict handles every write-related filesystem right the
// running kernel's Landlock ABI knows — writing, truncating, creating and
// removing every kind of entry, re-parenting (REFER, ABI 2), truncate
// (ABI 3) and device ioctls (ABI 5) — and grants all of them beneath each
// write path (only the file rights when the path is a file). Reading and
// executing are left unhandled, so they stay allowed everywhere. Rights a
// kernel's ABI lacks cannot be enforced there; Restrict returns the ABI it
// used so the caller can report that. With Rules.ScopesOnly the filesystem
// is not handled at all: only the scopes apply, and the process may still
// change mounts, which Landlock refuses to any domain that handles the
// filesystem (a nested sandbox needs that).
//
// Threads. Landlock restricts a thread and the threads and processes it
// creates afterwards. A Go program has many threads and any one may fork the
// next child, so Restrict sets no_new_privs and calls landlock_restrict_self on
// every thread with syscall.AllThreadsSyscall. The Go runtime supports that
// only in binaries built without cgo; with cgo Restrict fails instead of
// restricting some threads.
package landlock
