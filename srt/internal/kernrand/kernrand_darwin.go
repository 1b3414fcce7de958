package kernrand

import (
	"fmt"
	"io"
	"os"
)

// Fill fills b from /dev/urandom, macOS's kernel CSPRNG (Fortuna, seeded
// at boot, never blocking once seeded); an error panics.
func Fill(b []byte) {
	f, err := os.Open("/dev/urandom")
	if err == nil {
		_, err = io.ReadFull(f, b)
		f.Close()
	}
	if err != nil {
		panic(fmt.Sprintf("/dev/urandom: %v", err))
	}
}
