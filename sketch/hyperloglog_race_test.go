//go:build race

package sketch

// raceEnabled: the race detector makes sync.Pool drop a quarter of what is
// put in it, so pooled scratch buffers are allocated again that often.
const raceEnabled = true
