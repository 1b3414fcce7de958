//go:build linux

// Package limits decides how the settings' limits block is enforced on
// this machine, for either backend, and holds the cgroup leaf that
// enforces some of them.
//
// Decide is a pure function of the limits and of what the machine and the
// backend offer (Offer, which Probe fills in): for each limit it picks one
// mechanism, or refuses the limit when nothing here can enforce it. What
// it picks (Applied) is applied in three places, the same for both
// backends:
//
//   - srt (package sandbox) makes a cgroup v2 leaf (Leaf) with memory.max
//     and pids.max and starts the sandbox's first process in it
//     (clone3's CLONE_INTO_CGROUP): bubblewrap, or the Landlock backend's
//     init stage, and so everything the sandbox ever runs;
//   - the init stage (package initstage) sets the rlimits (Applied.Rlimits,
//     in its Spec) on the command only, through a re-exec of itself that
//     sets them and execs the command, so the init stage stays unbounded;
//   - srt stops the command past the wall-clock limit (Applied.Wall).
//
// The size of the filesystem of TMPDIR (Applied.TmpdirBytes) goes to the
// plan, whose backend mounts it: bubblewrap's --size on the tmpfs at
// /dev/shm. A backend without a mount namespace cannot size one, and says
// so in its Offer (Tmpfs false): tmpdirMiB is then refused.
package limits
