package kafka

import (
	"context"
	"encoding/binary"
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

// ResultReader reads the output topic of a bounded job (one whose input
// was ended with EndInput) from its start to its end.
type ResultReader[Out any] struct {
	cfg               Config
	out               operators.Decoder[Out]
	partials, outputs int
}

// NewResultReader returns a reader of cfg.Output; out decodes the value
// each result embeds (the merge stage's out codec, such as
// operators.JSONCodec).
func NewResultReader[Out any](ctx context.Context, cfg Config, out operators.Decoder[Out]) (*ResultReader[Out], error) {
	if err := checkBrokers(cfg.Brokers); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, invalidParam("out", "nil", "a Decoder")
	}
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	n, err := checkPartitions(ctx, cl, cfg.Partials, "", 0)
	var o int
	if err == nil {
		o, err = checkPartitions(ctx, cl, cfg.Output, "", 0)
	}
	if err == nil {
		_, err = checkPartitions(ctx, cl, cfg.Control, "", 0)
	}
	if err != nil {
		return nil, err
	}
	return &ResultReader[Out]{cfg: cfg, out: out, partials: n, outputs: o}, nil
}

// Close releases the reader (it holds no connection between reads).
func (r *ResultReader[Out]) Close() {}

// ReadAll waits until the merge stage has written, to the control topic,
// the end of every partials partition (each after its results were
// acknowledged), then reads the output topic up to its end offsets at that
// moment, calling each (when not nil) with every result and the time the
// merge stage produced it, and returns the last value of every key's
// window (a late firing updates it; a repeat after a merge restart has the
// same value). Result keys are the KeyHash of the output records' keys.
func (r *ResultReader[Out]) ReadAll(ctx context.Context, each func(operators.Result[Out], time.Time)) (map[WindowKey]Out, error) {
	ctl, err := newControlReader(r.cfg)
	if err != nil {
		return nil, err
	}
	ended := make(map[int32]bool, r.partials)
	var bad error
	ctl.merged = func(q int32) {
		if int(q) >= r.partials {
			bad = corrupt("merge end of partials partition %d of %d", q, r.partials)
			return
		}
		ended[q] = true
	}
	for len(ended) < r.partials && bad == nil {
		fs := ctl.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			ctl.cl.Close()
			return nil, fmt.Errorf("kafka: reading results (%d of %d merge ends read): %w", len(ended), r.partials, err)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if cr, err := decodeControl(rec.Value); err == nil && cr.kind == kindMergeEnd {
				ctl.merged(cr.q)
			}
		})
	}
	ctl.cl.Close()
	if bad != nil {
		return nil, bad
	}
	// Read committed, keeping the transaction markers: under ExactlyOnce
	// a marker may be a partition's last offset before its end.
	cl, err := newClient(r.cfg.Brokers, r.cfg.ClientOpts, kgo.FetchMaxWait(100*time.Millisecond),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := endOffsets(ctx, cl, r.cfg.Output, r.outputs, true)
	if err != nil {
		return nil, err
	}
	start := map[int32]kgo.Offset{}
	for p, e := range ends {
		if e > 0 {
			start[int32(p)] = kgo.NewOffset().AtStart()
		}
	}
	final := make(map[WindowKey]Out)
	left := len(start)
	if left == 0 {
		return final, nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{r.cfg.Output: start})
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return final, fmt.Errorf("kafka: reading results (%d output partitions left): %w", left, err)
		}
		var err error
		fs.EachRecord(func(rec *kgo.Record) {
			if err != nil || rec.Offset >= ends[rec.Partition] {
				return
			}
			if rec.Offset+1 == ends[rec.Partition] {
				left--
			}
			if rec.Attrs.IsControl() {
				return
			}
			var rr resultJSON
			if rr, err = decodeResult(rec.Value); err != nil {
				return
			}
			var v Out
			if v, err = r.out.Decode(rr.Value); err != nil {
				err = fmt.Errorf("%w: result value: %w", ErrCorrupt, err)
				return
			}
			res := operators.Result[Out]{Key: KeyHash(rec.Key), Start: rr.Start.UnixNano(), End: rr.End.UnixNano(), Value: v, Update: rr.Update}
			final[WindowKey{res.Key, res.Start}] = v
			if each != nil {
				each(res, emitted(rec))
			}
		})
		if err != nil {
			return final, err
		}
	}
	return final, nil
}

// emitted is the time the merge stage produced a result (its
// emittedHeader), the zero time when absent.
func emitted(rec *kgo.Record) time.Time {
	for _, h := range rec.Headers {
		if h.Key == emittedHeader && len(h.Value) == 8 {
			return time.Unix(0, int64(binary.BigEndian.Uint64(h.Value)))
		}
	}
	return time.Time{}
}
