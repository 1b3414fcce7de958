package sandbox

import (
	"fmt"

	"github.com/srt-sandbox/srt/settings"
)

// MacOSUnsupported says which setting asks for what srt cannot yet do on
// macOS, where commands run under a Seatbelt profile (internal/seatbelt,
// macos_darwin.go) and srt starts no proxy of its own: nil when srt can
// run the command as the settings say. The settings of Linux's sandbox
// that only weaken it (enableWeakerNestedSandbox,
// allowNestedUserNamespaces) are not refused: macOS has no user
// namespaces to weaken.
func MacOSUnsupported(cfg *settings.Config) error {
	n := cfg.Network
	ownProxy := n.HTTPProxyPort == 0 || n.SOCKSProxyPort == 0
	refuse := func(field, what string) error {
		return fmt.Errorf("%s: %s is not supported on macOS yet (docs/macos.md): remove it from the settings to run the command there", field, what)
	}
	switch {
	case len(n.AllowedDomains) > 0 && ownProxy:
		return fmt.Errorf("network.allowedDomains: srt does not start its own proxy on macOS yet, so no domain can be allowed (docs/macos.md): leave allowedDomains empty (the command reaches no network), or set network.httpProxyPort and network.socksProxyPort to a filtering proxy of your own on localhost")
	case n.TLSTerminate != nil:
		return refuse("network.tlsTerminate", "TLS termination (it runs in srt's proxy)")
	case n.MitmProxy != nil:
		return refuse("network.mitmProxy", "routing through an upstream proxy (srt's proxy does it)")
	case n.ParentProxy != nil:
		return refuse("network.parentProxy", "a parent proxy (srt's proxy uses it)")
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
			return refuse(fmt.Sprintf("credentials.envVars.%d.mode", i), `"mask" (the sentinel is swapped back by srt's proxy)`)
		}
	}
	return nil
}
