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
	cl       *kgo.Client
	out      Codec[Out]
	partials int
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
	if err == nil {
		_, err = checkPartitions(ctx, cl, cfg.Output, "", 0)
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	return &ResultReader[Out]{cl: cl, out: out, partials: n}, nil
}

// Close closes the reader's client.
func (r *ResultReader[Out]) Close() { r.cl.Close() }

// ReadAll reads results until every partials partition has sent its end of
// input, calling each (when not nil) with every result and the time the
// merge stage produced it, and returns the last value of every key's
// window (a late firing updates it; a repeat after a merge restart has the
// same value).
func (r *ResultReader[Out]) ReadAll(ctx context.Context, each func(operators.Result[Out], time.Time)) (map[WindowKey]Out, error) {
	final := make(map[WindowKey]Out)
	ended := make(map[int32]bool, r.partials)
	for len(ended) < r.partials {
		fetches := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return final, fmt.Errorf("kafka: reading results (%d of %d partials partitions ended): %w", len(ended), r.partials, err)
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
				ended[rr.from] = true
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
