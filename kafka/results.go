package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
)

// WindowKey names one key's window.
type WindowKey struct {
	Key   uint64
	Start int64
}

// ResultReader reads the output topic of a job from its start.
type ResultReader[Out any] struct {
	cl                *kgo.Client
	out               Codec[Out]
	partials, outputs int
}

// NewResultReader connects a reader of cfg.Output; out decodes the values.
func NewResultReader[Out any](ctx context.Context, cfg Config, out Codec[Out]) (*ResultReader[Out], error) {
	if err := checkBrokers(cfg.Brokers); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, invalidParam("out", "nil", "a Codec")
	}
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts, kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumeTopics(cfg.Output), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	n, err := checkPartitions(ctx, cl, cfg.Partials, "", 0)
	var o int
	if err == nil {
		o, err = checkPartitions(ctx, cl, cfg.Output, "", 0)
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return &ResultReader[Out]{cl: cl, out: out, partials: n, outputs: o}, nil
}

// Close closes the reader's client.
func (r *ResultReader[Out]) Close() { r.cl.Close() }

// ReadAll reads results until every partials partition's end of input has
// been read on every output partition (each merge partition writes its end
// behind its results on each), calling each (when not nil) with every result and the time the
// merge stage produced it, and returns the last value of every key's
// window (a late firing updates it; a repeat after a merge restart has the
// same value).
func (r *ResultReader[Out]) ReadAll(ctx context.Context, each func(operators.Result[Out], time.Time)) (map[WindowKey]Out, error) {
	final := make(map[WindowKey]Out)
	type end struct{ out, from int32 }
	ended := make(map[end]bool, r.partials*r.outputs)
	for len(ended) < r.partials*r.outputs {
		fetches := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return final, fmt.Errorf("kafka: reading results (%d of %d ends read): %w", len(ended), r.partials*r.outputs, err)
		}
		var err error
		fetches.EachRecord(func(rec *kgo.Record) {
			if err != nil {
				return
			}
			var rr resultRecord
			if rr, err = decodeResult(rec.Value); err != nil {
				return
			}
			if rr.kind == kindEnd {
				if int(rr.from) >= r.partials {
					err = corrupt("end from partials partition %d of %d", rr.from, r.partials)
					return
				}
				ended[end{rec.Partition, rr.from}] = true
				return
			}
			var v Out
			if v, err = r.out.Decode(rr.value); err != nil {
				return
			}
			res := operators.Result[Out]{Key: KeyHash(rec.Key), Start: rr.start, End: rr.end, Value: v, Update: rr.update}
			final[WindowKey{res.Key, res.Start}] = v
			if each != nil {
				each(res, rec.Timestamp)
			}
		})
		if err != nil {
			return final, err
		}
	}
	return final, nil
}
