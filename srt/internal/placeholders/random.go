package placeholders

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// random fills b from the kernel's CSPRNG with getrandom(2) itself:
// crypto/rand would link Go's FIPS module into srt, whose set-up every
// start of srt would pay for (docs/architecture.md; srt makes no
// cryptography of its own).
func random(b []byte) {
	for n := 0; n < len(b); {
		m, err := unix.Getrandom(b[n:], 0)
		if err != nil && err != unix.EINTR {
			panic(fmt.Sprintf("getrandom: %v", err)) // cannot fail on Linux ≥ 3.17 once seeded
		}
		n += max(m, 0)
	}
}
