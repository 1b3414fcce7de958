//go:build race

package relay

// raceEnabled: under the race detector sync.Pool drops what is put in it
// at random, so the splice pipes Go pools are not reused.
const raceEnabled = true
