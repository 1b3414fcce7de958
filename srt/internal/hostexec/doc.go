// Package hostexec decides whether srt may run a program it did not
// build into itself: bubblewrap and the network's srt-proxy and decider,
// which run on the host outside any sandbox, and the init stage (srt-init),
// which runs inside before any filter applies. srt runs such a program
// only when neither another user nor a sandboxed command could have put it
// there or changed it:
//
//   - every directory entry srt goes through to reach it (each component
//     of the path, and of every symlink on the way) and the file itself
//     are owned by root or by the caller (in a user namespace, an owner not
//     mapped into it counts as root: root's files show as such there);
//   - no directory on the way is writable by others, unless it is sticky
//     (as /tmp is) and so protects the entries of others;
//   - the file is a regular executable file not writable by others;
//   - per command: the sandbox the command gets could not change the file
//     nor replace any entry on the way (Check, with the command's plan).
//
// What srt runs is the resolved path the checks were made on.
package hostexec
