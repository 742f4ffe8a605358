package partition

import (
	"github.com/RoaringBitmap/roaring/v2"
)

// Metrics accumulates what a routed stream did to the workers: load per
// worker, the keys each worker saw (exactly, as dense ids in one roaring
// bitmap per worker) and the (key, worker) partials of the current
// aggregation period. Keys are mapped to dense ids with one map, so memory
// is O(distinct keys); Observe is for simulation, not for the hot path.
type Metrics struct {
	load     []uint64
	ids      map[uint64]uint32
	keys     []*roaring.Bitmap // keys per worker, whole stream
	period   []*roaring.Bitmap // keys per worker, current period
	partials []uint64          // partials of each closed period
	m        uint64
}

// NewMetrics returns empty metrics for n workers.
func NewMetrics(workers int) (*Metrics, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	mt := &Metrics{load: make([]uint64, workers), ids: make(map[uint64]uint32)}
	for range workers {
		mt.keys = append(mt.keys, roaring.New())
		mt.period = append(mt.period, roaring.New())
	}
	return mt, nil
}

// Observe records that a tuple with this key hash went to worker w.
func (mt *Metrics) Observe(key uint64, w int) {
	id, ok := mt.ids[key]
	if !ok {
		id = uint32(len(mt.ids))
		mt.ids[key] = id
	}
	mt.load[w]++
	mt.m++
	mt.keys[w].Add(id)
	mt.period[w].Add(id)
}

// ClosePeriod ends an aggregation period: it records the number of
// (key, worker) partials the period produced, which a merge stage must
// combine, and starts a new one.
func (mt *Metrics) ClosePeriod() {
	var p uint64
	for _, b := range mt.period {
		p += b.GetCardinality()
		b.Clear()
	}
	mt.partials = append(mt.partials, p)
}

// Load returns the tuples per worker (not a copy).
func (mt *Metrics) Load() []uint64 { return mt.load }

// Tuples is the number of tuples observed, m.
func (mt *Metrics) Tuples() uint64 { return mt.m }

// Distinct is the number of distinct keys observed, |K|.
func (mt *Metrics) Distinct() int { return len(mt.ids) }

// Partials returns the partial counts of the closed periods.
func (mt *Metrics) Partials() []uint64 { return mt.partials }

// Snapshot summarises the metrics so far.
func (mt *Metrics) Snapshot() Snapshot {
	s := LoadStats(mt.load)
	card := make([]uint64, len(mt.keys))
	var sum uint64
	for i, b := range mt.keys {
		card[i] = b.GetCardinality()
		sum += card[i]
	}
	if len(mt.ids) > 0 {
		s.Replication = float64(sum) / float64(len(mt.ids))
	}
	s.CardinalityImbalance = LoadStats(card).Imbalance
	s.Distinct = len(mt.ids)
	return s
}

// Snapshot holds the figures of a routed stream.
type Snapshot struct {
	// Tuples is m, the number of tuples routed.
	Tuples uint64
	// Imbalance is lambda = (max - avg) / avg over worker loads.
	Imbalance float64
	// MaxOverAvg is max / avg = 1 + lambda.
	MaxOverAvg float64
	// ImbalanceOverM is PKG's I(t)/m = (max - avg) / m.
	ImbalanceOverM float64
	// Replication is sum_i |K_i| / |K|: how many workers a key reaches on
	// average (1 for key grouping, up to n for shuffle).
	Replication float64
	// CardinalityImbalance is lambda over |K_i|, the distinct keys per worker
	// (the memory keyed state needs on each).
	CardinalityImbalance float64
	// Distinct is |K|.
	Distinct int
}

// LoadStats returns the load figures (Tuples, Imbalance, MaxOverAvg,
// ImbalanceOverM) of a load vector.
func LoadStats(load []uint64) Snapshot {
	var sum, mx uint64
	for _, l := range load {
		sum += l
		mx = max(mx, l)
	}
	s := Snapshot{Tuples: sum}
	if sum == 0 || len(load) == 0 {
		return s
	}
	avg := float64(sum) / float64(len(load))
	s.Imbalance = (float64(mx) - avg) / avg
	s.MaxOverAvg = float64(mx) / avg
	s.ImbalanceOverM = (float64(mx) - avg) / float64(sum)
	return s
}
