package link

import "syscall"

// sockCloexec makes a test's socket pairs close-on-exec where the
// flag exists at creation (macOS has none: sockcloexec_darwin_test.go).
const sockCloexec = syscall.SOCK_CLOEXEC
