//go:build !race

package runtime

// raceEnabled: see race_test.go.
const raceEnabled = false
