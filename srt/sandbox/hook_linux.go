package sandbox

import "github.com/srt-sandbox/srt/internal/initstage"

// The init stage's hook (see the package documentation).
func init() {
	initstage.Main()
}
