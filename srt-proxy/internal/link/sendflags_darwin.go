package link

import "syscall"

// sendFlags: never wait. macOS has no MSG_NOSIGNAL; Go's runtime does not
// let SIGPIPE of a socket write stop the program (only of stdout and
// stderr), so the write fails with EPIPE as on Linux.
const sendFlags = syscall.MSG_DONTWAIT
