package partition

import (
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/sketch"
)

// replicationSketch estimates the replication factor sum_i |K_i| / |K| of
// streams too big to hold their key sets: one HyperLogLog per worker for
// |K_i| and one for |K|. With 2^p registers each estimate has relative
// standard error about 1.04/sqrt(2^p), so the ratio is within a few times
// that. Memory: (n+1) * 2^p bytes once dense. Run builds one for
// Config.HLLPrecision. Not safe for concurrent use.
type replicationSketch struct {
	workers []*sketch.HyperLogLog
	all     *sketch.HyperLogLog
}

// newReplicationSketch returns an empty sketch for n workers at the given
// HyperLogLog precision (4..18).
func newReplicationSketch(workers int, precision uint8) (*replicationSketch, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	all, err := sketch.NewHyperLogLog(precision)
	if err != nil {
		return nil, invalidParam("precision", precision, "4..18")
	}
	r := &replicationSketch{all: all}
	for range workers {
		h, _ := sketch.NewHyperLogLog(precision)
		r.workers = append(r.workers, h)
	}
	return r, nil
}

// Observe records that a tuple with this key hash went to worker w.
func (r *replicationSketch) Observe(key uint64, w int) {
	// Routing chose w from the key's top bits, which HyperLogLog also uses
	// to pick a register: without remixing, worker i's keys would fill
	// only the registers of its slice of the hash space. Mix64 is a
	// bijection, so distinct keys stay distinct.
	h := hashx.Mix64(key ^ 0x243f6a8885a308d3)
	r.workers[w].AddHash(h)
	r.all.AddHash(h)
}

// Estimate returns the estimated replication factor (0 before any key) and
// the estimated distinct keys per worker, appended to dst.
func (r *replicationSketch) Estimate(dst []uint64) (float64, []uint64) {
	var sum uint64
	for _, h := range r.workers {
		e := h.Estimate()
		dst = append(dst, e)
		sum += e
	}
	all := r.all.Estimate()
	if all == 0 {
		return 0, dst
	}
	return float64(sum) / float64(all), dst
}
