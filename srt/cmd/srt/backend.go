//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/srt-sandbox/srt/settings"
)

// applyBackendFlags applies --backend and --allow-weaker over the
// settings' backend and allowWeaker.
func applyBackendFlags(ctx *cli.Context, cfg *settings.Config) error {
	if ctx.IsSet("backend") {
		b := ctx.String("backend")
		ok := false
		for _, known := range settings.Backends {
			ok = ok || b == known
		}
		if !ok {
			return fmt.Errorf("--backend %q: use auto, bubblewrap or landlock", b)
		}
		cfg.Backend = b
	}
	for _, v := range ctx.StringSlice("allow-weaker") {
		for _, n := range strings.Split(v, ",") {
			n = strings.TrimSpace(n)
			if err := settings.CheckWeaker(n); err != nil {
				return fmt.Errorf("--allow-weaker: %v", err)
			}
			cfg.AllowWeaker = append(cfg.AllowWeaker, n)
		}
	}
	return nil
}
