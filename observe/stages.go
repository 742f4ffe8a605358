package observe

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/skewerhq/skewer/runtime"
)

// StageLoad is one stage's load over its workers, from WorkerStats: the
// records each consumed (a source's: emitted) and what the balance of
// that load is.
type StageLoad struct {
	Name string `json:"name"`
	// Source reports a source stage.
	Source bool `json:"source"`
	// Load is each worker's records: consumed, or a source's emitted.
	Load []uint64 `json:"load"`
	// Imbalance is λ = (max-avg)/avg of Load (0 for an even or an empty
	// load), MaxOverAvg max/avg (1 when even; 0 when empty).
	Imbalance  float64 `json:"imbalance"`
	MaxOverAvg float64 `json:"max_over_avg"`
}

// Stages groups stats (runtime.Job.Metrics) by stage, in the job's order.
func Stages(stats []runtime.WorkerStats) []StageLoad {
	var out []StageLoad
	for _, s := range stats {
		if len(out) == 0 || out[len(out)-1].Name != s.Stage {
			out = append(out, StageLoad{Name: s.Stage, Source: s.Source})
		}
		st := &out[len(out)-1]
		v := s.In
		if s.Source {
			v = s.Out
		}
		st.Load = append(st.Load, v)
	}
	for i := range out {
		st := &out[i]
		var sum, top uint64
		for _, v := range st.Load {
			sum += v
			top = max(top, v)
		}
		if sum > 0 {
			avg := float64(sum) / float64(len(st.Load))
			st.MaxOverAvg = float64(top) / avg
			st.Imbalance = st.MaxOverAvg - 1
		}
	}
	return out
}

// sourceWatermark is the newest watermark of the job's source workers
// (NoWatermark when none has one), the event time the other stages'
// watermarks trail.
func sourceWatermark(stats []runtime.WorkerStats) int64 {
	wm := int64(math.MinInt64)
	for _, s := range stats {
		if s.Source && s.Watermark != math.MaxInt64 {
			wm = max(wm, s.Watermark)
		}
	}
	return wm
}

// stageHotKeys combines the hot keys of one stage's workers (ws): per
// edge and key, the workers' shares weighted by the records each emitted,
// heaviest first, at most runtime.MaxHotKeys per edge.
func stageHotKeys(ws []runtime.WorkerStats) []StageHotKey {
	type edgeKey struct {
		to  string
		key uint64
	}
	var total uint64
	for _, w := range ws {
		total += w.Out
	}
	if total == 0 {
		return nil
	}
	sum := map[edgeKey]float64{}
	for _, w := range ws {
		for _, k := range w.HotKeys {
			sum[edgeKey{k.To, k.Key}] += k.Share * float64(w.Out) / float64(total)
		}
	}
	out := make([]StageHotKey, 0, len(sum))
	for k, v := range sum {
		out = append(out, StageHotKey{To: k.to, Key: strconv.FormatUint(k.key, 16), Share: v})
	}
	slices.SortFunc(out, func(a, b StageHotKey) int {
		return cmp.Or(cmp.Compare(a.To, b.To), cmp.Compare(b.Share, a.Share), cmp.Compare(a.Key, b.Key))
	})
	kept := out[:0]
	for i, k := range out {
		if i < runtime.MaxHotKeys || out[i-runtime.MaxHotKeys].To != k.To {
			kept = append(kept, k)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}
