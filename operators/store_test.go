package operators

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// memKV is an in-memory KVStore: committed values, pending operands in
// order, and snapshots by number.
type memKV struct {
	merge   MergeFunc
	m       map[string][]byte
	pending []memOp
	snaps   []map[string][]byte
}

type memOp struct{ key, operand []byte }

func newMemKV() *memKV { return &memKV{m: map[string][]byte{}} }

func (s *memKV) SetMerge(f MergeFunc) { s.merge = f }
func (s *memKV) Get(dst, key []byte) ([]byte, bool, error) {
	v, ok := s.m[string(key)]
	return append(dst, v...), ok, nil
}
func (s *memKV) Merge(key, operand []byte) error {
	s.pending = append(s.pending, memOp{bytes.Clone(key), bytes.Clone(operand)})
	return nil
}
func (s *memKV) Commit() error {
	for _, op := range s.pending {
		v := op.operand
		if old, ok := s.m[string(op.key)]; ok {
			var err error
			if v, err = s.merge(nil, old, v); err != nil {
				return err
			}
		}
		s.m[string(op.key)] = v
	}
	s.pending = s.pending[:0]
	return nil
}
func (s *memKV) Scan(prefix []byte, f func(key, val []byte) error) error {
	for _, k := range slices.Sorted(maps.Keys(s.m)) {
		if bytes.HasPrefix([]byte(k), prefix) {
			if err := f([]byte(k), s.m[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
func (s *memKV) DeletePrefix(prefix []byte) error {
	maps.DeleteFunc(s.m, func(k string, _ []byte) bool { return bytes.HasPrefix([]byte(k), prefix) })
	return nil
}
func (s *memKV) Snapshot() ([]byte, error) {
	s.snaps = append(s.snaps, maps.Clone(s.m))
	return strconv.AppendInt(nil, int64(len(s.snaps)-1), 10), nil
}
func (s *memKV) Restore(ref []byte) error {
	if ref == nil {
		clear(s.m)
		return nil
	}
	n, err := strconv.Atoi(string(ref))
	if err != nil || n < 0 || n >= len(s.snaps) {
		return ErrCorrupt
	}
	s.m = maps.Clone(s.snaps[n])
	return nil
}

type storeWK struct {
	Key   uint64
	Start int64
}

// TestStoreWindowsSameAsHeap pins that StoreWindows, with a cache small
// enough to merge into its store many times, and restored from its own
// snapshot half-way, emits the counts KeyedWindows emits, in Complete and
// in Partial then Final phases, for global, tumbling and sliding windows.
func TestStoreWindowsSameAsHeap(t *testing.T) {
	type rec struct {
		Key  uint64
		Time int64
	}
	recs := make([]rec, 5_000)
	for i := range recs {
		recs[i] = rec{Key: uint64(i*i) % 503, Time: 1_700_000_000_000_000_000 + int64(i)*int64(10*time.Microsecond)}
	}
	tum, _ := Tumbling(time.Millisecond)
	sl, _ := Sliding(2*time.Millisecond, time.Millisecond)
	for name, w := range map[string]Windows{"global": GlobalWindow(), "tumbling": tum, "sliding": sl} {
		t.Run(name, func(t *testing.T) {
			want := map[storeWK]uint64{}
			for _, r := range recs {
				if w.IsGlobal() {
					want[storeWK{r.Key, math.MinInt64}]++
					continue
				}
				for s, ok := w.LastStart(r.Time), true; ok && w.End(s) > r.Time; s, ok = w.prevStart(s) {
					want[storeWK{r.Key, s}]++
				}
			}
			kv := newMemKV()
			cnt := Count[int]()
			cnt.Codec = Uint64Codec{}
			sw, err := NewStoreWindows(cnt, w, 0, PartialPhase, kv)
			require.NoError(t, err)
			sw.limit = 7
			merge := Aggregate[struct{}, uint64, uint64]{Create: cnt.Create, Merge: cnt.Merge, Result: cnt.Result, Codec: cnt.Codec, Add: func(a uint64, _ struct{}) uint64 { return a }}
			fin, err := NewStoreWindows(merge, w, 0, FinalPhase, newMemKV())
			require.NoError(t, err)
			fin.limit = 5
			got := map[storeWK]uint64{}
			res := func(r Result[uint64]) { got[storeWK{r.Key, r.Start}] += r.Value }
			part := func(p Partial[uint64]) { require.True(t, fin.AddPartial(p)) }
			for i, r := range recs {
				require.True(t, sw.Add(r.Key, r.Time, 1))
				if i == len(recs)/2 {
					st, err := sw.AppendState(nil)
					require.NoError(t, err)
					sw.Add(r.Key, r.Time, 1) // lost by the restore below
					require.NoError(t, sw.RestoreState(st))
				}
				if i%97 == 0 {
					sw.Advance(r.Time-int64(time.Millisecond), nil, part)
					fin.Advance(r.Time-int64(time.Millisecond), res, nil)
				}
			}
			sw.Advance(EndOfInput, nil, part)
			fin.Advance(EndOfInput, res, nil)
			require.NoError(t, sw.Err())
			require.NoError(t, fin.Err())
			require.Equal(t, want, got)
			require.Zero(t, sw.Pending())
			require.Empty(t, kv.m, "fired windows are deleted from the store")
		})
	}
}

// TestStoreWindowsLatenessSameAsHeap pins that with allowed lateness
// StoreWindows (a small cache, restored from its own snapshot half-way)
// emits what KeyedWindows emits: first firings, late updates (Update set,
// the revised value read back from the store) and, in Partial then Final
// phases, deltas; inputs later than the lateness are refused and counted
// alike.
func TestStoreWindowsLatenessSameAsHeap(t *testing.T) {
	type rec struct {
		Key  uint64
		Time int64
	}
	ms := int64(time.Millisecond)
	recs := make([]rec, 6_000)
	for i := range recs {
		recs[i] = rec{Key: uint64(i*i) % 211, Time: 1_700_000_000_000_000_000 + int64(i)*int64(10*time.Microsecond)}
		switch {
		case i%7 == 0:
			recs[i].Time -= 3 * ms // within the lateness
		case i%31 == 0:
			recs[i].Time -= 20 * ms // beyond it
		}
	}
	tum, _ := Tumbling(time.Millisecond)
	sl, _ := Sliding(2*time.Millisecond, time.Millisecond)
	cnt := Count[int]()
	cnt.Codec = Uint64Codec{}
	fin := Aggregate[struct{}, uint64, uint64]{Create: cnt.Create, Merge: cnt.Merge, Result: cnt.Result, Codec: cnt.Codec, Add: func(a uint64, _ struct{}) uint64 { return a }}
	const lateness = 5 * time.Millisecond
	for name, w := range map[string]Windows{"tumbling": tum, "sliding": sl} {
		for _, twoPhase := range []bool{false, true} {
			t.Run(name+"/twoPhase="+strconv.FormatBool(twoPhase), func(t *testing.T) {
				// run feeds recs to a first stage and, in two phases, its
				// partials to a final one; it returns every result, sorted.
				run := func(first KeyedState[int, uint64, uint64], final KeyedState[struct{}, uint64, uint64], restore func()) ([]Result[uint64], WindowStats) {
					var got []Result[uint64]
					res := func(r Result[uint64]) { got = append(got, r) }
					part := func(p Partial[uint64]) { final.AddPartial(p) }
					advance := func(wm int64) {
						if twoPhase {
							first.Advance(wm, nil, part)
							final.Advance(wm, res, nil)
						} else {
							first.Advance(wm, res, nil)
						}
					}
					for i, r := range recs {
						first.Add(r.Key, r.Time, 1)
						if i == len(recs)/2 && restore != nil {
							restore()
						}
						if i%97 == 0 {
							advance(r.Time - ms)
						}
					}
					advance(EndOfInput)
					slices.SortFunc(got, func(a, b Result[uint64]) int {
						return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value))
					})
					return got, first.Stats()
				}
				phase := Complete
				if twoPhase {
					phase = PartialPhase
				}
				heap, err := NewKeyedWindows(cnt, w, lateness, phase)
				require.NoError(t, err)
				heapFin, err := NewKeyedWindows(fin, w, lateness, FinalPhase)
				require.NoError(t, err)
				want, wantStats := run(heap, heapFin, nil)

				sw, err := NewStoreWindows(cnt, w, lateness, phase, newMemKV())
				require.NoError(t, err)
				sw.limit = 7
				swFin, err := NewStoreWindows(fin, w, lateness, FinalPhase, newMemKV())
				require.NoError(t, err)
				swFin.limit = 5
				restore := func() {
					for _, s := range []interface {
						AppendState([]byte) ([]byte, error)
						RestoreState([]byte) error
					}{sw, swFin} {
						st, err := s.AppendState(nil)
						require.NoError(t, err)
						require.NoError(t, s.RestoreState(st))
					}
				}
				got, gotStats := run(sw, swFin, restore)
				require.NoError(t, sw.Err())
				require.NoError(t, swFin.Err())
				require.Equal(t, wantStats, gotStats)
				require.Equal(t, want, got)
				require.True(t, slices.ContainsFunc(got, func(r Result[uint64]) bool { return r.Update }), "late updates happened")
				require.Positive(t, gotStats.Late, "inputs beyond the lateness happened")
			})
		}
	}
}

// TestStoreWindowsRefuses pins the shapes StoreWindows refuses, by name.
func TestStoreWindowsRefuses(t *testing.T) {
	cnt := Count[int]()
	cnt.Codec = nil
	_, err := NewStoreWindows(cnt, GlobalWindow(), 0, Complete, newMemKV())
	require.ErrorContains(t, err, "Aggregate.Codec")
	cnt.Codec = Uint64Codec{}
	_, err = NewStoreWindows(cnt, GlobalWindow(), -time.Second, Complete, newMemKV())
	require.ErrorContains(t, err, "allowedLateness")
	ses, _ := Sessions(time.Second)
	_, err = NewStoreWindows(cnt, ses, 0, Complete, newMemKV())
	require.ErrorContains(t, err, "win")
	_, err = NewStoreWindows(cnt, GlobalWindow(), 0, Complete, nil)
	require.ErrorContains(t, err, "kv")
}

func FuzzStoreWindowsRestore(f *testing.F) {
	cnt := Count[int]()
	cnt.Codec = Uint64Codec{}
	tum, _ := Tumbling(time.Millisecond)
	const lateness = 5 * time.Millisecond
	sw, err := NewStoreWindows(cnt, tum, lateness, Complete, newMemKV())
	require.NoError(f, err)
	sw.Add(1, 5, 1)
	sw.Add(2, int64(3*time.Millisecond), 1)
	st, err := sw.AppendState(nil)
	require.NoError(f, err)
	f.Add(st)
	sw.Advance(int64(2*time.Millisecond), func(Result[uint64]) {}, nil)
	sw.Add(3, 7, 1) // a late update: a fired window with a changed key
	st, err = sw.AppendState(nil)
	require.NoError(f, err)
	f.Add(st)
	f.Fuzz(func(t *testing.T, b []byte) {
		kv := newMemKV()
		kv.snaps = append(kv.snaps, map[string][]byte{})
		w, err := NewStoreWindows(cnt, tum, lateness, Complete, kv)
		require.NoError(t, err)
		if w.RestoreState(b) != nil {
			require.Zero(t, w.Pending())
		}
	})
}
