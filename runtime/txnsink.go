package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/operators"
)

// ErrSinkAhead reports a two-phase-commit sink whose committed output goes
// beyond the checkpoint a job restores from: a transaction committed after
// the one the checkpoint holds (the newer checkpoint that committed it
// failed verification, or is of another run). Restoring would commit that
// output twice, so the restore is refused; Restart does not retry it.
var ErrSinkAhead = errors.New("runtime: sink committed output after the checkpoint restored")

// TxnSink is a sink that writes in transactions with a two-phase commit,
// so that a checkpointed job's output is exactly once: every record
// reaches committed output once, whatever the failures and restarts.
//
// A worker's records go to its open transaction (Write). When a
// checkpoint barrier reaches the worker, and when it ends, the runtime
// calls PreCommit: the transaction becomes durable but stays invisible,
// its handle is kept in the worker's snapshot, and later Writes open the
// next one. When the checkpoint is complete (its manifest stored) the
// runtime calls Commit with that handle. An attempt starts with Recover:
// with the handle of the checkpoint it starts from, or nil from the
// beginning. Handles belong to one worker; a worker's transactions are
// ordered.
//
// Write, PreCommit and Recover of one worker are called from one
// goroutine; Commit from another, possibly while that worker writes its
// next transaction. Different workers' calls may run concurrently.
type TxnSink[T any] interface {
	// Write adds v to the worker's open transaction.
	Write(worker int, v T) error
	// PreCommit makes the open transaction durable, not visible, and
	// returns its handle.
	PreCommit(worker int) (txn []byte, err error)
	// Commit makes txn visible, and every transaction the worker
	// pre-committed before it. Committing a committed transaction again
	// is not an error (a restart may repeat it).
	Commit(worker int, txn []byte) error
	// Recover commits txn as Commit does (nil: none) and aborts every
	// other transaction of the worker that is not committed: those
	// pre-committed after txn, and any open one. When the worker has
	// committed a transaction pre-committed after txn, Recover changes
	// nothing and returns an error wrapping ErrSinkAhead: the output of
	// the checkpoint restored is not the output committed.
	Recover(worker int, txn []byte) error
}

// txnHandler writes a worker's records into a TxnSink; its state for a
// checkpoint is its pre-committed transaction.
type txnHandler[T any] struct {
	w    int
	sink TxnSink[T]
}

func (h *txnHandler[T]) process(ev []operators.Event[T], _ []uint64) error {
	for i := range ev {
		if err := h.sink.Write(h.w, ev[i].Value); err != nil {
			return err
		}
	}
	return nil
}

func (h *txnHandler[T]) advance(int64) error { return nil }
func (h *txnHandler[T]) idle()               {}

// txnState marks a handler state that holds a transaction, so that an
// empty handle is told from none.
const txnState = 'X'

func (h *txnHandler[T]) appendState(dst []byte) ([]byte, error) {
	txn, err := h.sink.PreCommit(h.w)
	if err != nil {
		return nil, fmt.Errorf("pre-commit: %w", err)
	}
	return append(append(dst, txnState), txn...), nil
}

func (h *txnHandler[T]) restoreState(b []byte) error {
	txn, err := txnOfState(b)
	if err != nil {
		return err
	}
	if err := h.sink.Recover(h.w, txn); err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	return nil
}

// restoreRescaled recovers the transactions of the old workers the worker
// takes over (old worker i goes to new worker i mod n): each commits its
// checkpoint's transaction and aborts the rest; a worker that replaces no
// old one of its own index aborts what that index may have left.
func (h *txnHandler[T]) restoreRescaled(in rescaleIn) error {
	own := false
	for _, a := range in.assigned {
		txn, err := txnOfState(a.state)
		if err != nil {
			return err
		}
		if err := h.sink.Recover(a.worker, txn); err != nil {
			return fmt.Errorf("recover worker %d: %w", a.worker, err)
		}
		own = own || a.worker == h.w
	}
	if !own {
		if err := h.sink.Recover(h.w, nil); err != nil {
			return fmt.Errorf("recover: %w", err)
		}
	}
	return nil
}

// txnOfState is the transaction handle in a txnHandler's state (nil for
// none).
func txnOfState(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) == 0 || b[0] != txnState {
		return nil, fmt.Errorf("%w: not a sink transaction", ErrCorruptSnapshot)
	}
	return b[1:], nil
}

// TxnSinkWorkers is an optional interface of a TxnSink made for a fixed
// number of workers (FileSink is): Workers is that number, which
// TwoPhaseSink takes as its stage's parallelism.
type TxnSinkWorkers interface {
	Workers() int
}

// TwoPhaseSink adds a terminal stage writing every record into sink, a
// two-phase-commit sink (default edge Forward). Its parallelism is the
// sink's Workers() when the sink implements TxnSinkWorkers (a Parallelism
// option of another value is an error of the job's build, naming both),
// else the Parallelism option's, else the upstream stage's: with
// Checkpoint, each checkpoint's output is committed
// when the checkpoint completes, and a restored or restarted job commits
// the output of the checkpoint it starts from and aborts the rest, so
// committed output holds every record exactly once. Without checkpoints
// the output is committed when the job ends. An error from the sink stops
// the job and is returned by Run.
func TwoPhaseSink[T any](s *Stream[T], name string, sink TxnSink[T], opts ...SinkOpt) {
	if sink == nil {
		s.job.fail(invalidParam(name+" sink", "nil", "a TxnSink"))
		return
	}
	var cfg stageConfig
	for _, o := range opts {
		o.applySink(&cfg)
	}
	if sw, ok := sink.(TxnSinkWorkers); ok {
		switch n := sw.Workers(); {
		case n < 1:
			s.job.fail(fmtStage(name, invalidParam("sink Workers()", n, ">= 1")))
		case cfg.parallelism == 0:
			cfg.parallelism = n
		case cfg.parallelism != n:
			s.job.fail(fmtStage(name, invalidParam("Parallelism", cfg.parallelism, fmt.Sprintf("the sink's Workers() = %d (leave Parallelism out, or build the sink for %d workers)", n, cfg.parallelism))))
		}
	}
	st, _ := addConsumer(s, name, cfg, Forward(),
		func(_ context.Context, w int, _ *collector[struct{}]) (handler[T], []output, error) {
			return &txnHandler[T]{w: w, sink: sink}, nil, nil
		})
	st.role = roleTxn
	if o, ok := sink.(TxnSinkOutput); ok {
		st.committed = o.CommittedOutput
	}
	st.commit = func(w int, state []byte) error {
		txn, err := txnOfState(state)
		if err != nil || txn == nil {
			return err
		}
		return sink.Commit(w, txn)
	}
	s.job.txnSinks = true
}
