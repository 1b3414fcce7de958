package plan

import (
	"fmt"
	"strings"
)

// String renders the plan one operation per line, for debug output and
// golden tests. The proxy password in the environment shows as "***": it
// is the one secret of the plan, and debug output goes where anyone may
// read it (a CI log, a bug report).
func (p *Plan) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "root %s\n", p.Root)
	if p.TmpdirBytes > 0 {
		fmt.Fprintf(&sb, "tmpfs %s size=%d, /dev read-only  # TMPDIR (limits.tmpdirMiB)\n", PrivateTmp, p.TmpdirBytes)
	}
	for _, m := range p.Kernel {
		fmt.Fprintf(&sb, "kernel %s %s  # %s\n", m.View, m.Path, m.Why)
	}
	if p.ProcReadOnly {
		sb.WriteString("kernel host-ro /proc (all of it)  # the kernel's files: sysctls, sysrq-trigger, irq, bus, pressure; chmod of an entry as root changes it for the host\n")
	}
	for _, m := range p.Mounts {
		fmt.Fprintf(&sb, "mount %s %s  # %s\n", m.View, m.Path, m.Why)
	}
	for _, ph := range p.Placeholders {
		kind := "file"
		if ph.Dir {
			kind = "dir"
		}
		if ph.Existing {
			kind += " (if another run's)"
		}
		if ph.Content != "" {
			fmt.Fprintf(&sb, "placeholder %s %s %q\n", kind, ph.Path, ph.Content)
			continue
		}
		fmt.Fprintf(&sb, "placeholder %s %s\n", kind, ph.Path)
	}
	for _, h := range p.Helpers {
		fmt.Fprintf(&sb, "helper %s\n", h)
	}
	if p.TrustBundle != "" {
		fmt.Fprintf(&sb, "trust-bundle %s -> %s\n", p.TrustBundle, TrustBundlePath)
	}
	if p.SharedNet {
		fmt.Fprintf(&sb, "network srt's namespace (wait for capture: %v)\n", p.Init.WaitNetwork)
	}
	if p.ResolvConf != "" {
		fmt.Fprintf(&sb, "resolv.conf %s\n", p.ResolvConf)
	}
	for _, f := range p.MaskedFiles {
		fmt.Fprintf(&sb, "masked-file %s\n", f.Path)
	}
	for _, w := range p.WriteRoots {
		fmt.Fprintf(&sb, "write-root %s\n", w)
	}
	for _, e := range p.Env {
		if e.Unset {
			fmt.Fprintf(&sb, "unsetenv %s\n", e.Name)
		} else {
			fmt.Fprintf(&sb, "setenv %s=%s\n", e.Name, p.mask(e.Value))
		}
	}
	if p.ProcBind {
		sb.WriteString("proc host (weaker nested sandbox)\n")
	}
	fmt.Fprintf(&sb, "init block-unix-sockets=%v block-namespaces=%v landlock=%s\n", p.Init.BlockUnixSockets, p.Init.BlockNamespaces, landlockString(p))
	for _, s := range p.Init.UnixSockets {
		fmt.Fprintf(&sb, "init unix-socket %s\n", s)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(&sb, "warning %s\n", w)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&sb, "note %s\n", n)
	}
	return sb.String()
}

// landlockString is "true" (write limit and abstract-socket scope),
// "scope-only" (allowNestedUserNamespaces) or "false", with ",required"
// under requireLandlock.
func landlockString(p *Plan) string {
	v := fmt.Sprint(p.Init.Landlock)
	if p.Init.Landlock && p.Init.LandlockScopeOnly {
		v = "scope-only"
	}
	if p.Init.RequireLandlock {
		v += ",required"
	}
	return v
}

// mask hides the proxy password in v.
func (p *Plan) mask(v string) string {
	if p.secret == "" {
		return v
	}
	return strings.ReplaceAll(v, p.secret, "***")
}
