//go:build !race

package sketch

// raceEnabled: see hyperloglog_race_test.go.
const raceEnabled = false
