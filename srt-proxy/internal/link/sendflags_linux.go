package link

import "syscall"

// sendFlags: never wait, and never raise SIGPIPE on a closed peer (an
// error instead).
const sendFlags = syscall.MSG_DONTWAIT | syscall.MSG_NOSIGNAL
