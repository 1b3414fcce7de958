package plan

import (
	"strconv"

	"github.com/srt-sandbox/srt/internal/initstage"
)

// BwrapArgs renders the plan as bubblewrap options, and the command
// bubblewrap starts (the init stage and the user's command). The options
// are passed through --args, so their total size is not limited by the
// kernel's argv limits; bubblewrap reads the command from its argv only.
//
// With firstFD > 0 the grants (Grants) are bound by descriptor, one each
// from firstFD on, in their order (--bind-fd, --ro-bind-fd: bubblewrap
// 0.8.0 and later, which also checks that what it mounted is the
// descriptor's file); with firstFD 0, by path.
func (p *Plan) BwrapArgs(initExe string, firstFD int) (options, command []string) {
	a := []string{
		"--new-session",     // no controlling terminal: TIOCSTI cannot reach the caller's
		"--die-with-parent", // srt gone, sandbox gone
		"--unshare-user",    // the command's capabilities mean nothing outside
		"--unshare-pid",     // it sees only its own processes
		"--unshare-ipc",     // no System V IPC with the host
		"--as-pid-1",        // the init stage is PID 1; no unfiltered process inside
		"--cap-drop", "ALL",
	}
	if !p.SharedNet {
		a = append(a, "--unshare-net") // no network: only a private loopback
	}
	if p.Root == HostRW {
		a = append(a, "--bind", "/", "/")
	} else {
		a = append(a, "--ro-bind", "/", "/")
	}
	a = append(a, "--dev", "/dev")
	if p.TmpdirBytes > 0 {
		a = append(a, "--size", strconv.FormatInt(p.TmpdirBytes, 10), "--tmpfs", PrivateTmp)
	}
	switch {
	case p.ProcBind && p.ProcReadOnly:
		a = append(a, "--ro-bind", "/proc", "/proc")
	case p.ProcBind:
		a = append(a, "--bind", "/proc", "/proc")
	default:
		a = append(a, "--proc", "/proc")
	}
	for _, m := range p.Kernel {
		switch m.View {
		case HostRO:
			// -try: an entry a module took away since the plan covers nothing
			a = append(a, "--ro-bind-try", m.Path, m.Path)
		case NullFile:
			a = append(a, "--ro-bind", "/dev/null", m.Path)
		}
	}
	if p.ProcReadOnly && !p.ProcBind {
		a = append(a, "--remount-ro", "/proc")
	}
	fd := firstFD
	for _, m := range p.Mounts {
		if m.Grant && firstFD > 0 {
			op := "--bind-fd"
			if m.View == HostRO {
				op = "--ro-bind-fd"
			}
			a = append(a, op, strconv.Itoa(fd), m.Path)
			fd++
			continue
		}
		switch m.View {
		case HostRW:
			a = append(a, "--bind", m.Path, m.Path)
		case HostRO:
			a = append(a, "--ro-bind", m.Path, m.Path)
		case Empty:
			a = append(a, "--tmpfs", m.Path)
		case NullFile:
			a = append(a, "--ro-bind", "/dev/null", m.Path)
		}
	}
	for _, h := range p.Helpers {
		a = append(a, "--ro-bind", h, h)
	}
	if p.TrustBundle != "" {
		a = append(a, "--ro-bind", p.TrustBundle, TrustBundlePath)
	}
	if p.ResolvConf != "" {
		a = append(a, "--ro-bind-data", strconv.Itoa(p.ResolvFD), p.ResolvConf)
	}
	for _, f := range p.MaskedFiles {
		a = append(a, "--ro-bind-data", strconv.Itoa(f.FD), f.Path)
	}
	if p.TmpdirBytes > 0 {
		// After the trust bundle, which is made beneath /dev: the rest of
		// /dev, a tmpfs as large as half the memory, is not a second,
		// unbounded TMPDIR. Its device files stay usable (a read-only
		// mount refuses changes to the filesystem, not I/O on devices),
		// and so do the mounts on it (/dev/shm, /dev/pts).
		a = append(a, "--remount-ro", "/dev")
	}
	for _, e := range p.Env {
		if e.Unset {
			a = append(a, "--unsetenv", e.Name)
		} else {
			a = append(a, "--setenv", e.Name, e.Value)
		}
	}
	return a, append([]string{initExe}, initstage.Args(p.Init, p.Command)...)
}

// Grants returns the mounts that BwrapArgs binds by descriptor, in the
// order their descriptors are numbered.
func (p *Plan) Grants() []Mount {
	var out []Mount
	for _, m := range p.Mounts {
		if m.Grant {
			out = append(out, m)
		}
	}
	return out
}
