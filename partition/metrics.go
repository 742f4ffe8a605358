package partition

import "math/bits"

// metrics accumulates what a routed stream did to the workers: load per
// worker, the workers each key reached (exactly: keys are mapped to dense
// ids with one map, and each id owns a bitset of ceil(n/64) words) and the
// (key, worker) partials of the current aggregation period (a second
// bitset, cleared per period). Memory is O(distinct keys * n/64) words;
// Observe is for simulation, not for the hot path.
type metrics struct {
	n        int
	words    int
	load     []uint64
	ids      map[uint64]uint32
	seen     []uint64 // words per id: workers the key reached, whole stream
	period   []uint64 // same, current period
	partials []uint64 // partials of each closed period
	open     uint64   // partials of the current period so far
	m        uint64
}

// newMetrics returns empty metrics for n workers.
func newMetrics(workers int) (*metrics, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	return &metrics{n: workers, words: (workers + 63) / 64, load: make([]uint64, workers), ids: make(map[uint64]uint32)}, nil
}

// Observe records that a tuple with this key hash went to worker w.
func (mt *metrics) Observe(key uint64, w int) {
	id, ok := mt.ids[key]
	if !ok {
		id = uint32(len(mt.ids))
		mt.ids[key] = id
		for range mt.words {
			mt.seen = append(mt.seen, 0)
			mt.period = append(mt.period, 0)
		}
	}
	mt.load[w]++
	mt.m++
	i, bit := int(id)*mt.words+w>>6, uint64(1)<<(w&63)
	mt.seen[i] |= bit
	if mt.period[i]&bit == 0 {
		mt.period[i] |= bit
		mt.open++
	}
}

// ClosePeriod ends an aggregation period: it records the number of
// (key, worker) partials the period produced, which a merge stage must
// combine, and starts a new one.
func (mt *metrics) ClosePeriod() {
	mt.partials = append(mt.partials, mt.open)
	mt.open = 0
	clear(mt.period)
}

// Load returns the tuples per worker (not a copy).
func (mt *metrics) Load() []uint64 { return mt.load }

// Tuples is the number of tuples observed, m.
func (mt *metrics) Tuples() uint64 { return mt.m }

// Distinct is the number of distinct keys observed, |K|.
func (mt *metrics) Distinct() int { return len(mt.ids) }

// Partials returns the partial counts of the closed periods.
func (mt *metrics) Partials() []uint64 { return mt.partials }

// Snapshot summarises the metrics so far.
func (mt *metrics) Snapshot() Snapshot {
	s := LoadStats(mt.load)
	card := make([]uint64, mt.n)
	var sum uint64
	for i, x := range mt.seen {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			card[(i%mt.words)*64+b]++
			sum++
			x &= x - 1
		}
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
