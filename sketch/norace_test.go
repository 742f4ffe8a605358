//go:build !race

package sketch

// raceEnabled: see race_test.go.
const raceEnabled = false
