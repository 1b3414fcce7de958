//go:build linux

// Package bwrap finds bubblewrap, learns what it can do, and explains in
// plain words why it cannot run when it cannot.
//
// Checking costs a `bwrap --version` run, so the answer is cached per
// binary (path, size, modification time, inode) under the user's cache
// directory; a changed binary is checked again.
package bwrap
