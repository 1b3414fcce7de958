// Package fsview is the read-only view of the host filesystem that the plan
// builder works against. The builder never touches the filesystem directly:
// it asks an FS, so plans can be computed against an in-memory tree in tests
// and golden files stay reproducible.
//
// Paths handed to an FS are absolute and clean. Realpath resolves symlinks
// one component at a time, the way the kernel does, so that the path srt
// mounts is the path a write would land on.
package fsview
