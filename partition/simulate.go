package partition

import (
	"fmt"

	"github.com/skewerhq/skewer/stream"
)

// Config describes one simulation: a stream dealt round-robin over Sources
// sources, each routing with its own partitioner from Factory to Workers
// workers. The simulation is single-threaded and deterministic.
type Config struct {
	Stream  stream.Stream
	Factory Factory
	Sources int
	Workers int
	// SampleEvery is how many tuples pass between samples of the load
	// figures (0: no samples, only the final result).
	SampleEvery int
	// Period is the length, in tuples, of an aggregation period for the
	// partials count (0: the whole stream is one period).
	Period int
	// MaxTuples stops the simulation after that many tuples (0: no limit).
	MaxTuples int
	// HLLPrecision, when not 0 (4..18), also estimates the replication
	// factor in fixed memory: one HyperLogLog of that precision per worker
	// and one for all keys (Result.ReplicationHLL).
	HLLPrecision uint8
}

// Sample is the load figures at one point of the stream.
type Sample struct {
	Tuples         uint64
	Imbalance      float64
	MaxOverAvg     float64
	ImbalanceOverM float64
}

// Result holds the figures of a simulated run.
type Result struct {
	Snapshot
	// Load is the tuples per worker.
	Load []uint64
	// Samples are the load figures every SampleEvery tuples.
	Samples []Sample
	// PartialsPerPeriod is the number of (key, worker) partials each
	// aggregation period produced.
	PartialsPerPeriod []uint64
	// MeanPartials is the mean of PartialsPerPeriod.
	MeanPartials float64
	// ReplicationHLL is the replication factor estimated with HyperLogLog
	// (0 unless Config.HLLPrecision is set).
	ReplicationHLL float64
	// Choices reports, for partitioners that choose (Auto), what source 0
	// chose and when.
	Choices []Choice
}

// Run simulates cfg, reading cfg.Stream to its end (or MaxTuples). A
// stream that yields no record is an error wrapping ErrEmptyStream: Run
// consumes the stream, as datasets.Count does, so replaying one stream
// takes a fresh stream or a rewind (SliceStream.Reset) between the two.
func Run(cfg Config) (*Result, error) {
	switch {
	case cfg.Stream == nil:
		return nil, invalidParam("Stream", "nil", "a stream.Stream")
	case cfg.Factory == nil:
		return nil, invalidParam("Factory", "nil", "a Factory")
	case cfg.Sources <= 0:
		return nil, invalidParam("Sources", cfg.Sources, "> 0")
	case cfg.SampleEvery < 0:
		return nil, invalidParam("SampleEvery", cfg.SampleEvery, ">= 0")
	case cfg.Period < 0:
		return nil, invalidParam("Period", cfg.Period, ">= 0")
	case cfg.MaxTuples < 0:
		return nil, invalidParam("MaxTuples", cfg.MaxTuples, ">= 0")
	}
	mt, err := newMetrics(cfg.Workers)
	if err != nil {
		return nil, err
	}
	var rs *replicationSketch
	if cfg.HLLPrecision != 0 {
		if rs, err = newReplicationSketch(cfg.Workers, cfg.HLLPrecision); err != nil {
			return nil, invalidParam("HLLPrecision", cfg.HLLPrecision, "0 or 4..18")
		}
	}
	parts := make([]Partitioner, cfg.Sources)
	for i := range parts {
		p, err := cfg.Factory(cfg.Workers)
		if err != nil {
			return nil, fmt.Errorf("partition: source %d: %w", i, err)
		}
		if p.Workers() != cfg.Workers {
			return nil, invalidParam("Factory(Workers).Workers()", p.Workers(), fmt.Sprintf("Workers = %d", cfg.Workers))
		}
		parts[i] = p
	}
	res := &Result{}
	buf := make([]stream.Record, 4096)
	var t uint64
	src := 0
	done := false
	for !done {
		k := cfg.Stream.Fill(buf)
		if k < len(buf) {
			done = true
		}
		for _, r := range buf[:k] {
			if cfg.MaxTuples > 0 && t == uint64(cfg.MaxTuples) {
				done = true
				break
			}
			w := parts[src].Route(r.Key)
			if src++; src == len(parts) {
				src = 0
			}
			mt.Observe(r.Key, w)
			if rs != nil {
				rs.Observe(r.Key, w)
			}
			t++
			if cfg.SampleEvery > 0 && t%uint64(cfg.SampleEvery) == 0 {
				s := LoadStats(mt.Load())
				res.Samples = append(res.Samples, Sample{t, s.Imbalance, s.MaxOverAvg, s.ImbalanceOverM})
			}
			if cfg.Period > 0 && t%uint64(cfg.Period) == 0 {
				mt.ClosePeriod()
			}
		}
	}
	if t == 0 {
		return nil, fmt.Errorf("%w: Config.Stream yielded no records (already drained, e.g. by datasets.Count?)", ErrEmptyStream)
	}
	if cfg.Period == 0 || t%uint64(cfg.Period) != 0 {
		mt.ClosePeriod()
	}
	res.Snapshot = mt.Snapshot()
	res.Load = append([]uint64(nil), mt.Load()...)
	if rs != nil {
		res.ReplicationHLL, _ = rs.Estimate(nil)
	}
	res.PartialsPerPeriod = mt.Partials()
	var sum uint64
	for _, p := range res.PartialsPerPeriod {
		sum += p
	}
	if len(res.PartialsPerPeriod) > 0 {
		res.MeanPartials = float64(sum) / float64(len(res.PartialsPerPeriod))
	}
	if c, ok := parts[0].(Chooser); ok {
		res.Choices = c.Choices()
	}
	return res, nil
}

// Choice is one decision of a partitioner that picks a strategy as the
// stream changes: from tuple At on, it routed with Kind.
type Choice struct {
	At   uint64
	Kind string
	// P1 and Zipf are the skew estimates behind the decision (from the
	// window's reservoir sample), Distinct the HyperLogLog estimate of the
	// distinct keys the source has seen.
	P1, Zipf float64
	Distinct uint64
}

// Chooser is implemented by partitioners that report what they chose.
type Chooser interface {
	Choices() []Choice
}
