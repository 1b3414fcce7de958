// Package initstage is the first program that runs inside the sandbox.
//
// bubblewrap starts it as PID 1 of the sandbox's PID namespace (--as-pid-1),
// from a descriptor of its executable (descriptor 4, ExeFD), so it needs
// nothing from the sandbox's filesystem. It makes itself non-dumpable, marks
// every inherited descriptor close-on-exec, applies the in-process
// restrictions it was asked for, starts the user's command in a process
// group of its own, forwards the signals srt relays to that group, reaps
// every orphan, and exits with the command's status (128+N when the command
// was killed by signal N). srt and the init stage share one channel,
// descriptor 3 (ChannelFD), one end of a Unix stream socket pair: srt sends
// a byte per signal to forward and, under WaitNetwork, CtlNetworkReady; the
// init stage sends MsgStarted, MsgViolation (the filesystem observer's,
// Spec.ObserveFD) and MsgExited. When the channel closes, srt is
// gone: the init stage exits at once, and the kernel kills everything left
// in the namespace.
//
// The descriptors bubblewrap is started with are, in order: 3 the channel,
// 4 the init stage's executable, 5 bubblewrap's options (--args), then one
// per grant (--bind-fd), the sandbox's resolv.conf (--ro-bind-data), the
// namespaces nsenter enters, the descriptors to pass (-pass-fd) and the
// filesystem rules (-observe-fd).
//
//	srt (host)                              init stage (PID 1 inside)
//	  │ ── bwrap --args 5 -- /proc/self/fd/4 ─────────────────────────▶ │
//	  │      --srt-init-stage=v2 <flags> -- bash -c cmd                 │
//	  │ ── CtlNetworkReady (0) on the channel ─▶ │ (-wait-network only)
//	  │                                        │ start command (pgid = pid)
//	  │ ◀──────────────── "R" on the channel ──│
//	  │ ◀── "V" + length + "deny openat /p" ───│ (-observe-fd only, any time)
//	  │ ── signal number byte on the channel ─▶│ kill(-pgid, sig)
//	  │                                        │ wait for the command
//	  │                                        │ kill and reap what is left
//	  │ ◀──────── "X" + status byte ───────────│ exit(status)
//	  │ ◀──────────── bwrap exits with status ─│
package initstage
