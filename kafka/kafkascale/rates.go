package kafkascale

import (
	"time"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/runtime/autoscale"
)

// The operators of a Kafka job as the policies see them: the input topic
// (a source), the workers' consumer group, and the merge stage's.
const (
	Input   = "input"
	Workers = "workers"
	Merge   = "merge"
)

// Snapshot is one reading of a job's counters: each worker's and each
// merge stage's Stats. A stage keeps its index from one snapshot to the
// next; one whose Elapsed or records went back since the earlier snapshot
// (a restarted process) counts from zero.
type Snapshot struct {
	Workers []kafka.WorkerStats
	Merges  []kafka.MergeStats
}

// RatesOf returns the rates of the workers and of the merge stage over
// the interval between two snapshots. A worker's records in are
// WorkerStats.Records, out its partials and watermarks (what the merge
// stage reads), a merge stage's in MergeStats.Records and out its
// results; an instance's useful time is its Elapsed less WaitInput and
// WaitOutput over the interval, and a stage's Elapsed the longest of its
// instances' intervals. The workers' TopKeyShare is a lower bound of the
// hottest key's share of their input in the interval (see topKeyShare).
func RatesOf(before, after Snapshot) map[string]autoscale.Rates {
	var w, m autoscale.Rates
	for i, a := range after.Workers {
		var b kafka.WorkerStats
		if i < len(before.Workers) && !workerRestarted(before.Workers[i], a) {
			b = before.Workers[i]
		}
		w.Elapsed = max(w.Elapsed, a.Elapsed-b.Elapsed)
		w.Instances = append(w.Instances, autoscale.Instance{
			In:     uint64(a.Records - b.Records),
			Out:    uint64(a.Partials + a.Watermarks - b.Partials - b.Watermarks),
			Useful: useful(a.Elapsed-b.Elapsed, a.WaitInput-b.WaitInput, a.WaitOutput-b.WaitOutput),
		})
	}
	w.TopKeyShare = topKeyShare(before.Workers, after.Workers)
	for i, a := range after.Merges {
		var b kafka.MergeStats
		if i < len(before.Merges) && !mergeRestarted(before.Merges[i], a) {
			b = before.Merges[i]
		}
		m.Elapsed = max(m.Elapsed, a.Elapsed-b.Elapsed)
		m.Instances = append(m.Instances, autoscale.Instance{
			In:     uint64(a.Records - b.Records),
			Out:    uint64(a.Results - b.Results),
			Useful: useful(a.Elapsed-b.Elapsed, a.WaitInput-b.WaitInput, a.WaitOutput-b.WaitOutput),
		})
	}
	return map[string]autoscale.Rates{Workers: w, Merge: m}
}

func useful(elapsed, waitInput, waitOutput time.Duration) time.Duration {
	return max(elapsed-waitInput-waitOutput, 0)
}

func workerRestarted(b, a kafka.WorkerStats) bool {
	return a.Elapsed < b.Elapsed || a.Records < b.Records || a.Partials < b.Partials ||
		a.Watermarks < b.Watermarks || a.Sampled < b.Sampled
}

func mergeRestarted(b, a kafka.MergeStats) bool {
	return a.Elapsed < b.Elapsed || a.Records < b.Records || a.Results < b.Results
}

// topKeyShare bounds from below the share of the workers' sampled input
// held by its most frequent key over the interval: per worker and listed
// key, the sampled records of the key at the end (at least its Lower
// bound) less those at the start (at most kafka.WorkerStats.SampledCount's
// upper bound), summed over the workers (a key split over several
// partitions is on several workers), over the records sampled in the
// interval. The sample is one record in 16, so the share is a lower bound
// of the sampled share, which estimates the true one. 0 when nothing was
// sampled.
func topKeyShare(before, after []kafka.WorkerStats) float64 {
	var total uint64
	lower := map[uint64]uint64{}
	for i, a := range after {
		var b kafka.WorkerStats
		if i < len(before) && !workerRestarted(before[i], a) {
			b = before[i]
		}
		total += a.Sampled - b.Sampled
		for _, c := range a.HotKeys {
			_, was := b.SampledCount(c.Key)
			if l := c.Lower(); l > was {
				lower[c.Key] += l - was
			}
		}
	}
	if total == 0 {
		return 0
	}
	var top uint64
	for _, l := range lower {
		top = max(top, l)
	}
	return float64(top) / float64(total)
}
