package hotkey_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/partitionlab"
)

// driftingKeys is m tuples of a Zipf(s) stream over 2,000 keys whose keys
// change every m/3 tuples (a new hot set), in an order set by seed.
func driftingKeys(m int, s float64, seed uint64) []uint64 {
	keys, _ := partlab.ExactZipf(m, 2000, s, seed)
	for i := range keys {
		keys[i] = hashx.Mix64(keys[i] + uint64(3*i/m)<<40)
	}
	return keys
}

// snapshotters are the detectors with snapshots, by name, at threshold
// theta and window W.
var snapshotters = map[string]func(theta float64, window int) (snapshotDetector, error){
	"stable":      func(th float64, w int) (snapshotDetector, error) { return hotkey.NewStable(th, w) },
	"filtered":    func(th float64, w int) (snapshotDetector, error) { return hotkey.NewFiltered(th, w) },
	"spacesaving": func(th float64, w int) (snapshotDetector, error) { return hotkey.NewSpaceSaving(th, w) },
	"lossy":       func(th float64, w int) (snapshotDetector, error) { return partitionlab.NewLossyCounting(th, w) },
	"countmin":    func(th float64, w int) (snapshotDetector, error) { return partitionlab.NewCountMin(th, w) },
	"exact":       func(th float64, w int) (snapshotDetector, error) { return partitionlab.NewWindowedExact(th, w) },
	"cumulative":  func(th float64, _ int) (snapshotDetector, error) { return partitionlab.NewExact(th) },
}

type snapshotDetector interface {
	hotkey.Detector
	AppendState(dst []byte) ([]byte, error)
	RestoreState(b []byte) error
}

// heads is a detector's head list, for the detectors that keep one.
func heads(d hotkey.Detector) []hotkey.HeadKey {
	if l, ok := d.(interface{ Heads() []hotkey.HeadKey }); ok {
		return l.Heads()
	}
	return nil
}

// TestSnapshotAnswersAsOriginal: a detector observes n tuples, is saved,
// and a fresh detector with the same parameters restores the state; both
// then observe the same 3W tuples and must give the same answer for every
// one, and the same Stats and Heads after each. n is taken on both sides of
// the window boundaries (the first swap at 2W, later ones every W), on
// skewed and drifting streams, for several orders.
func TestSnapshotAnswersAsOriginal(t *testing.T) {
	const theta, window = 0.01, 2048
	cuts := []int{0, 1, 63, 64, 500, window - 1, window, 2*window - 1, 2 * window, 2*window + 1, 3*window + 700, 5 * window}
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		cuts, seeds = []int{0, 64, window, 2*window - 1, 2 * window, 3*window + 700}, []uint64{1}
	}
	for name, mk := range snapshotters {
		for _, s := range []float64{0.8, 1.4} {
			for _, seed := range seeds {
				keys := driftingKeys(cuts[len(cuts)-1]+3*window, s, seed)
				t.Run(fmt.Sprintf("%s/s=%.1f/seed=%d", name, s, seed), func(t *testing.T) {
					for _, cut := range cuts {
						a, err := mk(theta, window)
						require.NoError(t, err)
						for _, k := range keys[:cut] {
							a.Observe(k)
						}
						state, err := a.AppendState(nil)
						require.NoError(t, err)
						again, err := a.AppendState(make([]byte, 3, 10))
						require.NoError(t, err)
						if name != "exact" && name != "cumulative" { // map order
							require.Equal(t, state, again[3:], "AppendState changed the detector")
						}
						b, err := mk(theta, window)
						require.NoError(t, err)
						require.NoError(t, b.RestoreState(state))
						require.Equal(t, a.Stats(), b.Stats(), "cut %d", cut)
						for i, k := range keys[cut : cut+3*window] {
							ha, pa := a.Observe(k)
							hb, pb := b.Observe(k)
							if ha != hb || pa != pb {
								require.Equal(t, [2]any{ha, pa}, [2]any{hb, pb}, "cut %d, tuple %d after", cut, i)
							}
							if sa, sb := a.Stats(), b.Stats(); sa != sb {
								require.Equal(t, sa, sb, "cut %d, tuple %d after", cut, i)
							}
						}
						require.Equal(t, heads(a), heads(b), "cut %d", cut)
					}
				})
			}
		}
	}
}

// TestSnapshotRejects: a state is refused (ErrCorrupt, the detector
// unchanged) when truncated, when it comes from a detector of another kind
// or other parameters, and for bytes flipped where the encoding checks them.
func TestSnapshotRejects(t *testing.T) {
	const theta, window = 0.01, 1024
	keys := driftingKeys(5*window, 1.2, 7)
	for name, mk := range snapshotters {
		t.Run(name, func(t *testing.T) {
			a, err := mk(theta, window)
			require.NoError(t, err)
			for _, k := range keys[:3*window+100] {
				a.Observe(k)
			}
			state, err := a.AppendState(nil)
			require.NoError(t, err)
			b, err := mk(theta, window)
			require.NoError(t, err)
			for i := range state {
				require.ErrorIs(t, b.RestoreState(state[:i]), hotkey.ErrCorrupt, "truncated to %d", i)
			}
			trailing := append(append([]byte(nil), state...), 0)
			require.ErrorIs(t, b.RestoreState(trailing), hotkey.ErrCorrupt)
			other, err := mk(theta/2, window)
			require.NoError(t, err)
			require.ErrorIs(t, other.RestoreState(state), hotkey.ErrCorrupt, "another theta")
			if name != "cumulative" {
				other, err = mk(theta, window/2)
				require.NoError(t, err)
				require.ErrorIs(t, other.RestoreState(state), hotkey.ErrCorrupt, "another window")
			}
			for kind, mk2 := range snapshotters {
				if kind == name || name == "cumulative" && kind == "stable" {
					continue
				}
				o, err := mk2(theta, window)
				require.NoError(t, err)
				require.Error(t, o.RestoreState(state), "%s state into %s", name, kind)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 200 {
				bad := append([]byte(nil), state...)
				bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
				if err := b.RestoreState(bad); err != nil {
					require.ErrorIs(t, err, hotkey.ErrCorrupt)
				}
			}
			require.NoError(t, b.RestoreState(state))
			for _, k := range keys[3*window+100:] {
				ha, pa := a.Observe(k)
				hb, pb := b.Observe(k)
				require.Equal(t, [2]any{ha, pa}, [2]any{hb, pb})
			}
		})
	}
}

// TestSnapshotLeavesDetectorOnError: a failed RestoreState leaves the
// detector exactly as it was (its next answers and its state).
func TestSnapshotLeavesDetectorOnError(t *testing.T) {
	const theta, window = 0.01, 1024
	keys := driftingKeys(6*window, 1.2, 8)
	for name, mk := range snapshotters {
		t.Run(name, func(t *testing.T) {
			a, err := mk(theta, window)
			require.NoError(t, err)
			b, err := mk(theta, window)
			require.NoError(t, err)
			for _, k := range keys[:2*window+10] {
				a.Observe(k)
				b.Observe(k)
			}
			c, err := mk(theta, window)
			require.NoError(t, err)
			for _, k := range keys[:4*window] {
				c.Observe(k)
			}
			other, err := c.AppendState(nil)
			require.NoError(t, err)
			for i := 0; i < len(other); i += max(1, len(other)/50) {
				require.Error(t, b.RestoreState(other[:i]))
			}
			for _, k := range keys[2*window+10:] {
				ha, pa := a.Observe(k)
				hb, pb := b.Observe(k)
				require.Equal(t, [2]any{ha, pa}, [2]any{hb, pb})
			}
		})
	}
}

// TestAppendStateAllocs: AppendState into a buffer with room allocates
// nothing, for the default detector.
func TestAppendStateAllocs(t *testing.T) {
	const theta = 1.0 / 500
	d, err := hotkey.NewStable(theta, hotkey.DefaultWindow(theta))
	require.NoError(t, err)
	keys := driftingKeys(3*hotkey.DefaultWindow(theta), 1.2, 3)
	for _, k := range keys {
		d.Observe(k)
	}
	buf, err := d.AppendState(nil)
	require.NoError(t, err)
	t.Logf("default detector state at theta = 1/500 (n = 100): %d bytes", len(buf))
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := d.AppendState(buf[:0]); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

// FuzzDetectorRestore: RestoreState never panics, fails with ErrCorrupt,
// and a detector it accepts answers without panicking.
func FuzzDetectorRestore(f *testing.F) {
	names := []string{"stable", "filtered", "spacesaving", "lossy", "countmin", "exact", "cumulative"}
	keys := driftingKeys(800, 1.2, 9)
	for i, name := range names {
		d, err := snapshotters[name](0.05, 128)
		require.NoError(f, err)
		for _, k := range keys[:100+100*i] {
			d.Observe(k)
		}
		st, err := d.AppendState(nil)
		require.NoError(f, err)
		f.Add(byte(i), st)
	}
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		d, err := snapshotters[names[int(which)%len(names)]](0.05, 128)
		require.NoError(t, err)
		if err := d.RestoreState(b); err != nil {
			require.ErrorIs(t, err, hotkey.ErrCorrupt)
			return
		}
		for _, k := range keys {
			d.Observe(k)
		}
		d.Stats()
	})
}
