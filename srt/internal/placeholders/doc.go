// Package placeholders creates, shares and removes the host paths that srt
// makes so that a write-protected path which does not exist has something
// to mount on.
//
// A placeholder must outlive every sandbox that mounts on it: unlinking a
// mount point on the host detaches the mount in every namespace, so an early
// removal would let a still-running sandbox create the protected path. Every
// srt process therefore records what it uses in a journal in a per-user
// state directory, under an exclusive lock, and a placeholder is removed
// only by the last live user, and only while it is still the very file or
// directory srt created (same device and inode, still empty). Journals of
// processes that died without cleaning up (SIGKILL) are collected by the
// next srt that needs placeholders.
package placeholders
