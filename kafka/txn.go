package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStage runs the transactions of a Worker or a Merge under ExactlyOnce:
// the records a stage produces between two commits and the offsets of its
// consumed topic (with their metadata) commit together, or not at all. It
// serves the stage's poll loop only.
type txnStage struct {
	s     *kgo.GroupTransactSession
	id    string // the transactional ID
	topic string // the consumed topic whose offsets commit in the transaction
	in    bool   // a Begin succeeded that no End has ended
	watch *brokerWatch
	// broken is the error of a failed End: the client's transaction
	// state is not known after it, so no transaction begins again.
	broken error
}

// newStageClient builds the client of a Worker or a Merge consuming topic,
// fed to watch: a plain one under AtLeastOnce, a transactional session
// with id under ExactlyOnce (then txn is not nil), whose producer ID it
// initialises at once: that aborts the open transaction of a crashed stage
// with the same id, which would otherwise hold read-committed consumers
// (and offset fetches) back until its timeout.
func newStageClient(ctx context.Context, cfg *Config, watch *brokerWatch, id, topic string, opts ...kgo.Opt) (*kgo.Client, *txnStage, error) {
	opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()), watch.hook())
	if cfg.Semantics != ExactlyOnce {
		cl, err := newClient(cfg.Brokers, cfg.ClientOpts, opts...)
		return cl, nil, err
	}
	s, err := kgo.NewGroupTransactSession(clientOpts(cfg.Brokers, cfg.ClientOpts, append(opts, kgo.TransactionalID(id))...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: client options: %w", ErrInvalidParameter, err)
	}
	if _, _, err := s.Client().ProducerID(ctx); err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("%w: initialise transactional producer %q: %w", ErrUnreachable, id, err)
	}
	return s.Client(), &txnStage{s: s, id: id, topic: topic, watch: watch}, nil
}

// stageError names the stage in err, a failure that stops it. Under
// ExactlyOnce (t not nil) a refused producer epoch means that a newer
// stage with the same transactional ID initialised its producer, which
// bumped the epoch: the error then wraps ErrFenced and names the ID.
func stageError(stage string, t *txnStage, err error) error {
	if t != nil && (errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)) {
		return fmt.Errorf("%w: %s (transactional ID %q): %w", ErrFenced, stage, t.id, err)
	}
	return fmt.Errorf("kafka: %s: %w", stage, err)
}

// begin opens a transaction unless one is open; after a failed end it
// returns that failure. It does not wait on the brokers (franz-go's
// Begin is local; the transaction starts with its first produce).
func (t *txnStage) begin() error {
	if t.broken != nil {
		return t.broken
	}
	if t.in {
		return nil
	}
	if err := t.s.Begin(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	t.in = true
	return nil
}

// beginFunc is begin for a poll loop: a failure is kept in failed, with
// the stage's name.
func (t *txnStage) beginFunc(stage string, failed *firstFailure) func() bool {
	return func() bool {
		if err := t.begin(); err != nil {
			err = stageError(stage, t, err)
			failed.set(err)
			return false
		}
		return true
	}
}

// end commits the open transaction with exactly the given offsets of
// t.topic and their metadata (not the positions the client consumed). It
// returns whether it committed: false with a nil error is an abort (a
// rebalance during the transaction, a refused offset commit), after which
// the caller rewinds to its last committed positions. An error is final:
// the session's End can fail with the client still inside its
// transaction (End's flush cut off, or an EndTxn whose outcome is unknown,
// which franz-go keeps open for an abort to follow), so end aborts it
// (franz-go's documented TryAbort retry, which fences the unknown one),
// and begin and end return the error from then on; the caller stops the
// stage. ctx comes from t.watch's wait: an end it cuts off wraps
// ErrBrokersUnreachable or the run's context error, as does one that
// franz-go gave up on while the brokers stayed unreachable for the bound
// (brokerWatch.settle), and the abort waits for the brokers within
// shutdownTimeout while they answer. Call it
// without the stage's lock: the session's rebalance callbacks run the
// stage's, which take it.
func (t *txnStage) end(ctx context.Context, offsets map[int32]kgo.EpochOffset, meta map[int32]string) (bool, error) {
	if t.broken != nil {
		return false, t.broken
	}
	if !t.in {
		return true, nil
	}
	ctx = kgo.PreTxnCommitFnContext(ctx, func(req *kmsg.TxnOffsetCommitRequest) error {
		parts := make([]kmsg.TxnOffsetCommitRequestTopicPartition, 0, len(offsets))
		for p, eo := range offsets {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, eo.Offset, eo.Epoch
			if m, ok := meta[p]; ok {
				rp.Metadata = &m
			}
			parts = append(parts, rp)
		}
		keep := req.Topics[:0]
		found := false
		for _, rt := range req.Topics {
			if rt.Topic != t.topic {
				continue
			}
			found = true
			rt.Partitions = parts
			if len(parts) > 0 {
				keep = append(keep, rt)
			}
		}
		if !found && len(parts) > 0 {
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic, rt.Partitions = t.topic, parts
			keep = append(keep, rt)
		}
		req.Topics = keep
		return nil
	})
	ok, err := t.s.End(ctx, kgo.TryCommit)
	if err != nil {
		t.broken = waitErr(ctx, "end transaction", t.watch.settle(ctx, err))
		actx, cancel := t.watch.wait(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		if _, aerr := t.s.End(actx, kgo.TryAbort); aerr != nil {
			t.broken = fmt.Errorf("%w (abort: %w)", t.broken, aerr)
		}
		return false, t.broken
	}
	t.in = false
	return ok, nil
}
