// Package initstage is the first program that runs inside the sandbox.
//
// bubblewrap starts it as PID 1 of the sandbox's PID namespace (--as-pid-1),
// from a descriptor of srt's own executable, so it needs nothing from the
// sandbox's filesystem. It makes itself non-dumpable, marks every inherited
// descriptor close-on-exec, applies the in-process restrictions it was asked
// for, starts the user's command in a process group of its own, forwards the
// signals srt relays to that group, reaps every orphan, and exits with the
// command's status (128+N when the command was killed by signal N). When the
// control pipe from srt closes, srt is gone: the init stage exits at once,
// and the kernel kills everything left in the namespace.
//
//	srt (host)                              init stage (PID 1 inside)
//	  │ ── bwrap … /proc/self/fd/5 --srt-init-stage <spec> -- sh -c cmd ──▶ │
//	  │                                        │ start command (pgid = pid)
//	  │ ◀──────────── "R" on the status pipe ──│
//	  │ ── signal number byte on ctl pipe ───▶ │ kill(-pgid, sig)
//	  │                                        │ wait for the command
//	  │                                        │ kill and reap what is left
//	  │ ◀────────── "X" + status byte ─────────│ exit(status)
//	  │ ◀──────────── bwrap exits with status ─│
package initstage
