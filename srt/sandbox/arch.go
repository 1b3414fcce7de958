//go:build linux

package sandbox

import (
	"fmt"
	"runtime"

	"github.com/srt-sandbox/srt/internal/seccomp"
	"github.com/srt-sandbox/srt/settings"
)

// checkArch refuses to run where srt has no seccomp filter, unless the
// settings opt out of both filters: running without a filter the settings
// ask for would silently drop it. (Terminal injection is then stopped by
// the new session alone; docs/security.md says so.)
func checkArch(cfg *settings.Config) error {
	if _, ok := seccomp.Native(); ok {
		return nil
	}
	if cfg.Network.AllowAllUnixSockets && cfg.AllowNestedUserNamespaces {
		return nil
	}
	return fmt.Errorf("srt's seccomp filters exist for x86-64 and arm64 only, and this machine is %s; set network.allowAllUnixSockets and allowNestedUserNamespaces to run without them (Unix sockets and nested namespaces are then not blocked): %w", runtime.GOARCH, ErrCannotSandbox)
}
