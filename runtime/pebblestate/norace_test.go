//go:build !race

package pebblestate_test

// raceEnabled: see race_test.go.
const raceEnabled = false
