package peers

import (
	"fmt"
	"testing"
	"time"

	"github.com/kamstrup/intmap"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/stream"
)

// The uint64 hash maps: skewer's internal/u64map against
// kamstrup/intmap (open addressing, linear probing, fill 0.7, values
// copied in and out) and Go's built-in map (a Swiss table since Go 1.24),
// on the three workloads skewer's tables serve. Each benchmark runs the
// contenders over the same keys one after the other, the order rotating
// per round, and reports each one's ns per key (<lib>-ns/key) and its
// time over u64map's (<lib>/u64map).

// mapKeys returns n key hashes drawn from Zipf(s) over k keys.
func mapKeys(tb testing.TB, k uint64, s float64, n int) []uint64 {
	tb.Helper()
	z, err := datasets.NewZipf(k, s, int64(n), 11)
	if err != nil {
		tb.Fatal(err)
	}
	recs := make([]stream.Record, n)
	recs = recs[:z.Fill(recs)]
	keys := make([]uint64, len(recs))
	for i, r := range recs {
		keys[i] = r.Key
	}
	return keys
}

var mapLibs = []string{"u64map", "intmap", "gomap"}

// sameArray returns an intmap whose array has as many slots as a u64map
// array of the given bytes with 16-byte entries: intmap sizes its array
// to the power of two at or above capacity/0.7.
func sameArray[V any](bytes int) *intmap.Map[uint64, V] {
	return intmap.New[uint64, V](int(0.7 * float64(bytes/16)))
}

// mapPaired runs round(lib) for each lib in turn, b.N rounds, rotating the
// order, and reports ns per key (keysPerRound keys a round).
func mapPaired(b *testing.B, keysPerRound int, round func(lib int)) {
	spent := make([]time.Duration, len(mapLibs))
	b.ReportAllocs()
	r := 0
	for b.Loop() {
		for j := range mapLibs {
			lib := (r + j) % len(mapLibs)
			t0 := time.Now()
			round(lib)
			spent[lib] += time.Since(t0)
		}
		r++
	}
	n := float64(r) * float64(keysPerRound)
	for i, name := range mapLibs {
		b.ReportMetric(float64(spent[i].Nanoseconds())/n, name+"-ns/key")
		if i > 0 {
			b.ReportMetric(float64(spent[i])/float64(spent[0]), name+"/u64map")
		}
	}
}

// BenchmarkMapCount is the operators' keyed count: every key of a Zipf(1.1)
// stream over 10^6 keys (about 340k distinct in 2^21) counted into a map
// that starts empty, growth included.
func BenchmarkMapCount(b *testing.B) {
	n := 1 << 21
	if testing.Short() {
		n = 1 << 14
	}
	keys := mapKeys(b, 1_000_000, 1.1, n)
	mapPaired(b, len(keys), func(lib int) {
		switch lib {
		case 0:
			var m u64map.Map[uint64]
			for _, k := range keys {
				v, _ := m.Put(k)
				*v++
			}
			sink += uint64(m.Len())
		case 1:
			m := intmap.New[uint64, uint64](0)
			for _, k := range keys {
				v, _ := m.Get(k)
				m.Put(k, v+1)
			}
			sink += uint64(m.Len())
		case 2:
			m := map[uint64]uint64{}
			for _, k := range keys {
				m[k]++
			}
			sink += uint64(len(m))
		}
	})
}

// BenchmarkMapIndexChurn is Space-Saving's key index on a full summary of
// capacity keys: each key of a Zipf(1.1) stream over 10^6 keys is looked up
// and, when absent, replaces the key inserted longest ago (a delete and an
// insert), so the index holds capacity keys throughout.
func BenchmarkMapIndexChurn(b *testing.B) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 14
	}
	keys := mapKeys(b, 1_000_000, 1.1, n)
	for _, capacity := range []int{1000, 10000} {
		b.Run(fmt.Sprint("capacity=", capacity), func(b *testing.B) {
			ours := &u64map.Map[int32]{}
			ours.Init(capacity, 1, u64map.Half)
			theirs := sameArray[int32](ours.Bytes())
			gomap := make(map[uint64]int32, capacity)
			rings := make([][]uint64, len(mapLibs))
			next := make([]int, len(mapLibs))
			for i := range rings {
				rings[i] = make([]uint64, 0, capacity)
			}
			// churn calls has, del and put as Space-Saving calls its index.
			churn := func(lib int, has func(uint64) bool, del func(uint64), put func(uint64, int32)) {
				ring := rings[lib]
				for _, k := range keys {
					if has(k) {
						continue
					}
					if len(ring) < capacity {
						put(k, int32(len(ring)))
						ring = append(ring, k)
						continue
					}
					i := next[lib]
					del(ring[i])
					put(k, int32(i))
					ring[i] = k
					next[lib] = (i + 1) % capacity
				}
				rings[lib] = ring
			}
			mapPaired(b, len(keys), func(lib int) {
				switch lib {
				case 0:
					churn(lib, func(k uint64) bool { return ours.Get(k) != nil },
						func(k uint64) { ours.Delete(k) },
						func(k uint64, i int32) { v, _ := ours.Put(k); *v = i })
				case 1:
					churn(lib, theirs.Has, func(k uint64) { theirs.Del(k) }, theirs.Put)
				case 2:
					churn(lib, func(k uint64) bool { _, ok := gomap[k]; return ok },
						func(k uint64) { delete(gomap, k) },
						func(k uint64, i int32) { gomap[k] = i })
				}
			})
		})
	}
}

// BenchmarkMapLookup is D-Choices' head table: a fixed table of the 256
// heaviest keys of a Zipf(s) stream over 10^5 keys, looked up for every
// key of the stream (hits for head tuples, misses for the rest).
func BenchmarkMapLookup(b *testing.B) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 14
	}
	for _, s := range []float64{0.8, 1.4} {
		b.Run(fmt.Sprintf("zipf=%.1f", s), func(b *testing.B) {
			keys := mapKeys(b, 100_000, s, n)
			counts := map[uint64]int{}
			for _, k := range keys {
				counts[k]++
			}
			heads := make([]uint64, 0, len(counts))
			for k := range counts {
				heads = append(heads, k)
			}
			// The 256 heaviest, ties by key.
			for i := range min(256, len(heads)) {
				for j := i + 1; j < len(heads); j++ {
					if counts[heads[j]] > counts[heads[i]] || counts[heads[j]] == counts[heads[i]] && heads[j] < heads[i] {
						heads[i], heads[j] = heads[j], heads[i]
					}
				}
			}
			heads = heads[:min(256, len(heads))]
			ours := &u64map.Map[float64]{}
			ours.Init(len(heads), 0, u64map.Half)
			theirs := sameArray[float64](ours.Bytes())
			gomap := make(map[uint64]float64, len(heads))
			for i, k := range heads {
				v, _ := ours.Put(k)
				*v = float64(i)
				theirs.Put(k, float64(i))
				gomap[k] = float64(i)
			}
			mapPaired(b, len(keys), func(lib int) {
				var sum float64
				switch lib {
				case 0:
					for _, k := range keys {
						if v := ours.Get(k); v != nil {
							sum += *v
						}
					}
				case 1:
					for _, k := range keys {
						if v, ok := theirs.Get(k); ok {
							sum += v
						}
					}
				case 2:
					for _, k := range keys {
						if v, ok := gomap[k]; ok {
							sum += v
						}
					}
				}
				sink += uint64(sum)
			})
		})
	}
}
