//go:build race

package sketch

// raceEnabled: the race detector's build allocates where the normal one
// does not (slices.Grow's temporary in DDSketch's stores), so an
// allocation bound that counts those allocations doubles under it.
const raceEnabled = true
