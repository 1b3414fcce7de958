// Package kernrand fills buffers from the kernel's CSPRNG with getrandom(2)
// itself: crypto/rand would link Go's FIPS module into srt, whose set-up
// every start of srt would pay for (docs/architecture.md; srt makes no
// cryptography of its own).
package kernrand

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Fill fills b. getrandom cannot fail on Linux ≥ 3.17 once the pool is
// seeded; any other error panics.
func Fill(b []byte) {
	for n := 0; n < len(b); {
		m, err := unix.Getrandom(b[n:], 0)
		if err != nil && err != unix.EINTR {
			panic(fmt.Sprintf("getrandom: %v", err))
		}
		n += max(m, 0)
	}
}
