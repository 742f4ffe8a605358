package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// savedDetector is a user's Detector (the default detector's rule, behind
// a type that shows only Observe, Stats and its snapshot) that implements
// Snapshotter but lists no head: the partitioner saves it with its own
// state, and D-Choices its head keys too.
type savedDetector struct{ s *hotkey.Stable }

func (d savedDetector) Observe(key uint64) (bool, float64)     { return d.s.Observe(key) }
func (d savedDetector) Stats() HeadStats                       { return d.s.Stats() }
func (d savedDetector) AppendState(dst []byte) ([]byte, error) { return d.s.AppendState(dst) }
func (d savedDetector) RestoreState(b []byte) error            { return d.s.RestoreState(b) }

// streams of the snapshot tests: m tuples over 20,000 keys, skewed (Zipf
// 1.4), extreme (Zipf 2.0, routed over 5 workers: Auto routes as W-Choices
// there), flat (Zipf
// 0.5) or drifting (four segments, Zipf 1.4, 0.5, 1.4 and
// 0.5, each over new keys, so that keys turn hot and cool and Auto changes
// its mode), in an order set by seed. probs are the first segment's.
func snapshotStream(kind string, m int, seed uint64) ([]uint64, map[uint64]float64) {
	s := map[string]float64{"skewed": 1.4, "extreme": 2.0, "flat": 0.5, "drifting": 1.4}[kind]
	keys, probs := partlab.ExactZipf(m, 20_000, s, seed)
	if kind == "drifting" {
		flat, _ := partlab.ExactZipf(m, 20_000, 0.5, seed)
		for i := range keys {
			seg := 4 * i / m
			if seg%2 == 1 {
				keys[i] = flat[i]
			}
			if seg > 0 {
				keys[i] = hashx.Mix64(keys[i] + uint64(seg)<<40)
			}
		}
	}
	return keys, probs
}

// snapshotDetectors are the detectors the snapshot tests route with.
func snapshotDetectors(probs map[uint64]float64) map[string][]Option {
	return map[string][]Option{
		"default": nil,
		"sources": {WithSources(4)}, // the default detector with short windows
		"oracle":  {oracleOption(probs)},
		"saved": {WithDetector(func(_ int, theta float64) (Detector, error) {
			s, err := hotkey.NewStable(theta, hotkey.DefaultWindow(theta))
			return savedDetector{s}, err
		})},
	}
}

// TestSnapshotChoicesRoutesAsOriginal: a head-aware partitioner routes N
// keys and is saved; a later instance of the same factory (another tie
// salt) restores the state, and both route the next M keys to the same
// workers, and Auto reports the same choices. N falls before, at and after
// the default detector's window boundaries (W = 16,384 tuples at n = 10:
// the first swap at 2W, then every W) and Auto's decisions (every 8,192
// tuples here); M spans three windows. n = 10 workers (5 for the extreme
// stream, W = 16,384 too). Skewed, flat and drifting streams,
// several orders, every detector kind (the oracle's fixed head table, a
// user's Detector that implements Snapshotter, whose head keys D-Choices
// then saves too).
func TestSnapshotChoicesRoutesAsOriginal(t *testing.T) {
	const w = 16384
	cuts := []int{0, 1, 4095, 4097, w - 1, 2*w - 1, 2 * w, 2*w + 1, 3*w + 5000}
	seeds, streams := []uint64{1, 2, 3}, []string{"skewed", "extreme", "flat", "drifting"}
	if testing.Short() {
		cuts, seeds, streams = []int{4097, 2*w + 1}, []uint64{1}, []string{"drifting"}
	}
	m := cuts[len(cuts)-1] + 3*w
	for _, kind := range []string{"dchoices", "dchoices-paper", "wchoices", "rr-head", "auto"} {
		for _, stream := range streams {
			for _, seed := range seeds {
				keys, probs := snapshotStream(stream, m, seed)
				for det, opts := range snapshotDetectors(probs) {
					if testing.Short() && det != "default" && det != "saved" {
						continue
					}
					n := 10
					if stream == "extreme" {
						n = 5
					}
					t.Run(fmt.Sprintf("%s/%s/seed=%d/%s", kind, stream, seed, det), func(t *testing.T) {
						f, err := testFactory(kind, append(opts, WithAutoWindow(8192, 1024), WithSeed(seed))...)
						require.NoError(t, err)
						for _, cut := range cuts {
							a, err := f(n)
							require.NoError(t, err)
							for _, k := range keys[:cut] {
								a.Route(k)
							}
							state, err := a.(Snapshotter).AppendState(nil)
							require.NoError(t, err)
							b, err := f(n)
							require.NoError(t, err)
							require.NoError(t, b.(Snapshotter).RestoreState(state), "cut %d", cut)
							for i, k := range keys[cut : cut+3*w] {
								if wa, wb := a.Route(k), b.Route(k); wa != wb {
									require.Equal(t, wa, wb, "cut %d, tuple %d after", cut, i)
								}
							}
							if c, ok := a.(Chooser); ok {
								require.Equal(t, c.Choices(), b.(Chooser).Choices(), "cut %d", cut)
							}
						}
					})
				}
			}
		}
	}
}

// TestSnapshotChoicesRejects: a state is refused with ErrCorrupt, the
// receiver left as it was (it then routes as its twin), when truncated,
// with a byte flipped where the decoder checks it, for another kind, worker
// count or detector, and AppendState does not change the partitioner.
func TestSnapshotChoicesRejects(t *testing.T) {
	const n = 10
	keys, probs := snapshotStream("drifting", 80_000, 4)
	kinds := []string{"dchoices", "dchoices-paper", "wchoices", "rr-head", "auto"}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			f, err := testFactory(kind, WithAutoWindow(8192, 1024))
			require.NoError(t, err)
			a, err := f(n)
			require.NoError(t, err)
			for _, k := range keys[:40_000] {
				a.Route(k)
			}
			state, err := a.(Snapshotter).AppendState(nil)
			require.NoError(t, err)
			again, err := a.(Snapshotter).AppendState(nil)
			require.NoError(t, err)
			require.Equal(t, state, again)
			// b and its twin c route the same stream; b meets bad states.
			b, err := f(n)
			require.NoError(t, err)
			c, err := f(n)
			require.NoError(t, err)
			require.NoError(t, c.(Snapshotter).RestoreState(mustState(t, b)))
			for _, k := range keys[:20_000] {
				require.Equal(t, b.Route(k), c.Route(k))
			}
			step := max(1, len(state)/300)
			for i := 0; i < len(state); i += step {
				require.ErrorIs(t, b.(Snapshotter).RestoreState(state[:i]), ErrCorrupt, "truncated to %d", i)
			}
			require.ErrorIs(t, b.(Snapshotter).RestoreState(append(append([]byte{}, state...), 0)), ErrCorrupt)
			for _, other := range kinds {
				if other == kind {
					continue
				}
				o, err := testNew(other, n)
				require.NoError(t, err)
				require.ErrorIs(t, o.(Snapshotter).RestoreState(state), ErrCorrupt, "%s state into %s", kind, other)
			}
			o, err := testNew(kind, n+1)
			require.NoError(t, err)
			require.ErrorIs(t, o.(Snapshotter).RestoreState(state), ErrCorrupt, "another worker count")
			o, err = testNew(kind, n, oracleOption(probs))
			require.NoError(t, err)
			require.ErrorIs(t, o.(Snapshotter).RestoreState(state), ErrCorrupt, "another detector")
			for _, k := range keys[20_000:40_000] {
				require.Equal(t, c.Route(k), b.Route(k), "a failed restore changed the partitioner")
			}
			rng := rand.New(rand.NewPCG(5, 6))
			for range 300 {
				bad := append([]byte{}, state...)
				bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
				if err := b.(Snapshotter).RestoreState(bad); err != nil {
					require.ErrorIs(t, err, ErrCorrupt)
				}
			}
		})
	}
}

func mustState(t *testing.T, p Partitioner) []byte {
	t.Helper()
	b, err := p.(Snapshotter).AppendState(nil)
	require.NoError(t, err)
	return b
}

// TestSnapshotChoicesAllocs: AppendState into a buffer with room allocates
// nothing, with the default detector; the test logs the state's size.
func TestSnapshotChoicesAllocs(t *testing.T) {
	m := 200_000
	if testing.Short() {
		m = 50_000
	}
	for _, n := range []int{8, 100} {
		keys, _ := snapshotStream("skewed", m, 1)
		for _, kind := range []string{"dchoices", "wchoices", "auto"} {
			p, err := testNew(kind, n)
			require.NoError(t, err)
			for _, k := range keys {
				p.Route(k)
			}
			buf := mustState(t, p)
			t.Logf("%s, n = %d, default detector: %d bytes", kind, n, len(buf))
			allocs := testing.AllocsPerRun(20, func() {
				if _, err := p.(Snapshotter).AppendState(buf[:0]); err != nil {
					panic(err)
				}
			})
			require.Zero(t, allocs, "%s n=%d", kind, n)
		}
	}
}

// TestSnapshotUnsavedDetector: a user's Detector that does not implement
// Snapshotter is not saved; the partitioner's own state is, and restores.
func TestSnapshotUnsavedDetector(t *testing.T) {
	keys, probs := snapshotStream("skewed", 30_000, 2)
	f, err := NewFactory("dchoices", WithDetector(func(_ int, theta float64) (Detector, error) {
		o, err := hotkey.NewFixed(probs, theta)
		return opaqueDetector{o}, err
	}))
	require.NoError(t, err)
	a, err := f(10)
	require.NoError(t, err)
	for _, k := range keys[:10_000] {
		a.Route(k)
	}
	b, err := f(10)
	require.NoError(t, err)
	require.NoError(t, b.(Snapshotter).RestoreState(mustState(t, a)))
	// The oracle keeps no state: routes are identical.
	for _, k := range keys[10_000:] {
		require.Equal(t, a.Route(k), b.Route(k))
	}
}

// TestSnapshotRestoreIntoUsed: restoring into an instance that has routed
// other keys (its own loads, cursors and detector windows) routes as the
// original too: nothing of the receiver's past survives, the cursors of an
// oracle's fixed head table included.
func TestSnapshotRestoreIntoUsed(t *testing.T) {
	keys, probs := snapshotStream("skewed", 60_000, 6)
	other, _ := snapshotStream("drifting", 20_000, 7)
	for _, kind := range []string{"dchoices", "dchoices-paper", "wchoices", "auto"} {
		for det, opts := range map[string][]Option{"default": nil, "oracle": {oracleOption(probs)}} {
			t.Run(kind+"/"+det, func(t *testing.T) {
				f, err := testFactory(kind, append(opts, WithAutoWindow(8192, 1024))...)
				require.NoError(t, err)
				a, err := f(10)
				require.NoError(t, err)
				b, err := f(10)
				require.NoError(t, err)
				for _, k := range keys[:30_000] {
					a.Route(k)
				}
				for _, k := range other {
					b.Route(k)
				}
				require.NoError(t, b.(Snapshotter).RestoreState(mustState(t, a)))
				for i, k := range keys[30_000:] {
					if wa, wb := a.Route(k), b.Route(k); wa != wb {
						require.Equal(t, wa, wb, "tuple %d after", i)
					}
				}
			})
		}
	}
}
