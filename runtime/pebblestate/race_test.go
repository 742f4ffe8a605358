//go:build race

package pebblestate_test

// raceEnabled: the race detector allocates on its own (and sync.Pool drops
// some of what is put back), so allocation counts are checked only without
// it.
const raceEnabled = true
