//go:build race

package proxy

// raceEnabled: the race detector multiplies memory use, so memory limits
// are not checked under it.
const raceEnabled = true
