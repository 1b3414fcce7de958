//go:build linux

package sandbox

import (
	"os"

	"github.com/srt-sandbox/srt/internal/bwrap"
	"github.com/srt-sandbox/srt/internal/plan"
	"github.com/srt-sandbox/srt/settings"
)

// The fixes the refusals of a program suggest, by how it was found.
const (
	fixBwrapPath   = "set bwrapPath to a copy only root or you can change and no sandbox may write, such as /usr/bin/bwrap"
	fixBwrapOnPATH = "set bwrapPath to a trusted copy, such as /usr/bin/bwrap, or take that directory off PATH"
)

// bwrapFix is the fix for a refused bubblewrap.
func bwrapFix(configured string) string {
	if configured != "" {
		return fixBwrapPath
	}
	return fixBwrapOnPATH
}

// programs are what a command is checked against: the programs it makes
// srt run. The init stage is left out when it is this very program
// (/proc/self/exe): srt runs the file it is already running, whatever is
// at its path now. The network's programs are left out once they run.
func (m *Manager) programs() []hostProgram {
	var out []hostProgram
	if m.backend != settings.BackendLandlock {
		out = append(out, hostProgram{"bwrap", m.bwrap.Path, m.bwrapFix})
		// The network namespace's program: it runs outside every sandbox.
		if t := m.tools(); t.err == nil {
			out = append(out, hostProgram{"nsenter", t.nsenter, fixNsenter})
		}
	}
	if m.initExe != "/proc/self/exe" {
		out = append(out, hostProgram{"srt-init", m.initExe, m.initFix})
	}
	if m.net.current() == nil {
		if m.net.ext.ownProxy() {
			if d, err := companion(m.opts.DeciderExecutable, "decider", "DeciderExecutable"); err == nil {
				out = append(out, d)
			}
		}
		if p, err := companion(m.opts.ProxyExecutable, "srt-proxy", "ProxyExecutable"); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// checked are the resolved paths a command runs.
type checked struct{ bwrap, init, nsenter string }

// checkPrograms resolves the programs a command makes srt run and refuses
// any that another user, or a command in this sandbox, could have put
// there or changed (p.Writable). When everything is set the sandbox may
// write all the caller may, the programs included (filesystem.disabled,
// or "/" writable as root): those settings give up this check too
// (docs/security.md), and only ownership and modes are checked. Then it
// checks bubblewrap's version, once per binary.
func (m *Manager) checkPrograms(p *plan.Plan, everything bool) (checked, error) {
	run := checked{init: m.initExe}
	if m.backend != settings.BackendLandlock {
		run.nsenter = m.tools().nsenter
	}
	for _, h := range m.programs() {
		prog, err := h.resolve()
		if err == nil && !everything {
			err = prog.Check(p, os.Getuid())
		}
		if err != nil {
			return checked{}, err
		}
		switch h.name {
		case "bwrap":
			run.bwrap = prog.Real
		case "srt-init":
			run.init = prog.Real
		}
	}
	if run.bwrap == "" {
		return run, nil // the Landlock backend runs no bubblewrap
	}
	m.bwrapMu.Lock()
	defer m.bwrapMu.Unlock()
	if m.bwrapChecked.Path != run.bwrap {
		info := bwrap.Info{Path: run.bwrap, Setuid: m.bwrap.Setuid}
		if err := bwrap.CheckVersion(&info); err != nil {
			return checked{}, err
		}
		m.bwrapChecked = info
		m.opts.Logger.Debug("bubblewrap checked", "bwrap", info.Path, "version", info.Version.String())
	}
	return run, nil
}
