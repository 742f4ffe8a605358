package testkit

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// Epoch is the event time of the first record of ZipfRecords, in Unix
// nanoseconds (November 2023): far from zero, as real event times are.
const Epoch int64 = 1_700_000_000_000_000_000

// ZipfRecords returns n records drawn with seed: the keys of
// datasets.NewZipf(keys, s, n, seed) (any s >= 0, keys >= 1), and record i
// at event time Epoch + i*step plus a uniform jitter in [0, disorder),
// drawn from a generator of its own. The same arguments give the same
// records. It panics on parameters datasets.NewZipf rejects.
func ZipfRecords(seed uint64, n int, s float64, keys uint64, step, disorder time.Duration) []stream.Record {
	z, err := datasets.NewZipf(keys, s, int64(n), seed)
	if err != nil {
		panic(err)
	}
	recs := make([]stream.Record, n)
	z.Fill(recs)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range recs {
		t := int64(i) * int64(step)
		if disorder > 0 {
			t += r.Int64N(int64(disorder))
		}
		recs[i].Time = Epoch + t
	}
	return recs
}

// WindowKey is the constraint of a map key naming one window of one key:
// the key's hash and the window's start (math.MinInt64 for the global
// window, a session's first record time for sessions), as
// kafka.WindowKey does.
type WindowKey interface {
	~struct {
		Key   uint64
		Start int64
	}
}

// ExactCounts is the single-threaded model of a windowed count: the number
// of records of each (key, window), for global, tumbling, sliding and
// session windows.
func ExactCounts[K WindowKey](recs []stream.Record, w operators.Windows) map[K]uint64 {
	m := make(map[K]uint64)
	if w.IsSession() {
		EachSession(recs, int64(w.Gap()), func(key uint64, start, _ int64, n uint64) { m[windowKey[K](key, start)] = n })
		return m
	}
	for _, r := range recs {
		EachWindow(w, r.Time, func(start int64) { m[windowKey[K](r.Key, start)]++ })
	}
	return m
}

func windowKey[K WindowKey](key uint64, start int64) K {
	return K(struct {
		Key   uint64
		Start int64
	}{key, start})
}

// EachWindow calls f with the start of every window of w (global, tumbling
// or sliding) holding event time t, latest first.
func EachWindow(w operators.Windows, t int64, f func(start int64)) {
	if w.IsGlobal() {
		f(math.MinInt64)
		return
	}
	size, slide := int64(w.Size()), int64(w.Slide())
	for s := w.LastStart(t); s > t-size; s -= slide {
		f(s)
	}
}

// EachSession is the single-threaded model of session windows: per key, it
// sorts the event times and cuts wherever two consecutive ones are gap or
// more apart; f gets each session [start, end) (end = last time + gap) and
// its number of records, keys in no particular order.
func EachSession(recs []stream.Record, gap int64, f func(key uint64, start, end int64, n uint64)) {
	byKey := map[uint64][]int64{}
	for _, r := range recs {
		byKey[r.Key] = append(byKey[r.Key], r.Time)
	}
	for key, ts := range byKey {
		slices.Sort(ts)
		first := 0
		for i := 1; i <= len(ts); i++ {
			if i == len(ts) || ts[i]-ts[i-1] >= gap {
				f(key, ts[first], ts[i-1]+gap, uint64(i-first))
				first = i
			}
		}
	}
}
