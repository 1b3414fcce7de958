//go:build linux

// Package e2e holds black-box tests that run the built srt binary with real
// bubblewrap, as root and as an unprivileged user, and check what a
// sandboxed command can and cannot do.
//
// The unprivileged user is SRT_TEST_USER (default "srt-test"); scripts/test
// creates it. When the tests run as root they run every case as both; when
// they run as an ordinary user they run as that user only and say so.
package e2e
