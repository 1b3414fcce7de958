//go:build linux || darwin

package sandbox

import (
	"fmt"

	"github.com/srt-sandbox/srt/internal/seatbelt"
	"github.com/srt-sandbox/srt/settings"
)

// macOSProxy sets the proxies of a macOS command's profile and
// environment: srt's own on the host's loopback (he, nil when both ports
// are the user's), whose ports alone the profile lets the command reach
// and whose credentials go in the proxy variables (never in argv or the
// profile); and the user's own proxies of network.httpProxyPort and
// socksProxyPort on localhost, reached directly, without credentials.
func macOSProxy(env *seatbelt.Env, n *settings.Network, he *hostEgress) {
	if he != nil {
		p := he.proxy
		env.HTTPPort, env.SOCKSPort, env.ProxyUser, env.ProxyToken = p.HTTPPort, p.SOCKSPort, p.User, p.Token
	}
	if n.HTTPProxyPort != 0 {
		env.HTTPPort, env.HTTPExternal = n.HTTPProxyPort, true
	}
	if n.SOCKSProxyPort != 0 {
		env.SOCKSPort, env.SOCKSExternal = n.SOCKSProxyPort, true
	}
}

// MacOSUnsupported says which setting asks for what srt cannot yet do on
// macOS, where commands run under a Seatbelt profile (internal/seatbelt,
// macos_darwin.go) with srt's proxy on the host's loopback (hostproxy.go):
// nil when srt can run the command as the settings say. The settings of
// Linux's sandbox that only weaken it (enableWeakerNestedSandbox,
// allowNestedUserNamespaces) are not refused: macOS has no user
// namespaces to weaken.
func MacOSUnsupported(cfg *settings.Config) error {
	n := cfg.Network
	refuse := func(field, what string) error {
		return fmt.Errorf("%s: %s is not supported on macOS yet (docs/macos.md): remove it from the settings to run the command there", field, what)
	}
	switch {
	case n.TLSTerminate != nil:
		return refuse("network.tlsTerminate", "TLS termination (the command's trust bundle is not wired into the macOS profile)")
	case len(n.ExposeLoopbackPorts) > 0:
		return refuse("network.exposeLoopbackPorts", "exposing ports (the sandbox shares the host's loopback on macOS; allowLocalBinding lets it listen)")
	case cfg.Limits.Any():
		return refuse("limits", "resource limits (they are Linux cgroups and rlimits)")
	case cfg.RequireLandlock:
		return refuse("requireLandlock", "Landlock (a Linux kernel feature)")
	case cfg.Backend == settings.BackendBubblewrap || cfg.Backend == settings.BackendLandlock:
		return refuse("backend", fmt.Sprintf("the %s backend (Linux only; macOS has Seatbelt)", cfg.Backend))
	case len(cfg.AllowWeaker) > 0:
		return refuse("allowWeaker", "the Landlock backend's exemptions")
	}
	for i, e := range cfg.Credentials.EnvVars {
		if e.Mode == "mask" {
			return refuse(fmt.Sprintf("credentials.envVars.%d.mode", i), `"mask" (the decider is not given the command's masks on macOS)`)
		}
	}
	return nil
}
