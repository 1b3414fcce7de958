package main

// sockCloexec: macOS sets close-on-exec only after creation; the test
// sockets are handed to net.FileConn, which duplicates them with it.
const sockCloexec = 0
