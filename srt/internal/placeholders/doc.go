//go:build linux

// Package placeholders creates, shares and removes the host paths that srt
// makes so that a write-protected path which does not exist has something
// to mount on.
//
// A placeholder must outlive every sandbox that mounts on it: unlinking a
// mount point on the host detaches the mount in every namespace, so an
// early removal would let a still-running sandbox create the protected
// path. The runs that use a placeholder may belong to different state
// directories ($TMPDIR/srt-<uid>: a terminal and an IDE with different
// TMPDIRs see none of each other's journals), so the placeholder itself
// carries the coordination, in two locks that every srt process sees and
// that go with the descriptors of a run that dies (lock.go):
//
//   - every run holds flock(LOCK_SH) on every entry at a placeholder path
//     it mounts on, for as long as its sandbox may run: the one it made,
//     one it adopted, and a file of the user's too;
//   - srt unlinks a placeholder only while it holds flock(LOCK_EX) on it,
//     and only while the name still leads to the very file (holding what
//     srt wrote) or empty directory srt made (device, inode, birth time);
//   - a run that made or adopted a placeholder also holds its marker, an
//     OFD lock: a write lock on one byte of a file (so only a process that
//     may write the file can forge it), a read lock on a directory (which
//     srt removes only while it is empty): another run that finds the
//     marker on an existing entry adopts it instead of taking it for the
//     user's.
//
// Two runs A and B, of different state directories, and ~/.bashrc missing:
//
//	A                                  ~/.bashrc            B
//	mkdir/O_EXCL, LOCK_SH, marker ---> placeholder
//	(sandbox mounts on it)                         <------ open, LOCK_SH,
//	                                                       name still leads
//	                                                       to it; marker of
//	                                                       another: adopt,
//	                                                       marker, journal
//	                                                       it as shared
//	end: LOCK_EX|LOCK_NB fails (B) --> stays               (sandbox runs)
//	journal kept, released
//	                                   unlinked <--------- end: LOCK_EX|NB
//	                                                       succeeds, still
//	                                                       srt's: unlink
//
// Every run records the placeholders it made or adopted in a journal in
// its state directory, under an exclusive lock. It names each before it
// exists: a placeholder is made under a temporary name of srt's that the
// journal gave it, locked, journalled with its identity, and only then
// renamed to its path without replacing anything (acquire.go, makeAt), so
// that a run killed at any moment leaves nothing its journal does not
// name. A run that ends while
// others still hold some keeps its journal, marked released, and a run
// killed with SIGKILL leaves its journal as it was: the next srt of that
// state directory sweeps them, removing what no one holds any more.
package placeholders
