package query

import (
	"errors"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
)

// ErrInvalidParameter reports Options a query cannot run with: an
// unknown partitioner kind, a negative parallelism, a state backend given
// to a query that keeps no windowed state or whose windows the backend
// does not hold (sessions).
var ErrInvalidParameter = errors.New("query: invalid parameter")

// Options tunes how a query's keyed stages run. The zero Options is valid:
// the Auto partitioner ("auto") on every keyed edge, the parallelism of
// the source, state on the heap.
type Options struct {
	// Partitioner is the kind of every keyed edge (partition.Kinds():
	// "hash", "dchoices", "auto", ...); "" is "auto".
	Partitioner string
	// Parallelism is the workers of each keyed stage (0: the upstream
	// stage's). Stateless queries run on their source's workers, as
	// chained operators do.
	Parallelism int
	// StateBackend, when set, keeps windowed state in it (for example
	// runtime/pebblestate); stateless queries and session windows (q11)
	// refuse one.
	StateBackend operators.StateBackend
}

// DefaultProcessingRate is q12's processing clock by default: 10^7 events
// per second, the rate at which the reference suite's source emits its
// events.
const DefaultProcessingRate = 10_000_000

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// validate checks o for a query; keyed tells whether it has keyed state,
// session whether that state is session windows.
func (o Options) validate(keyed, session bool) error {
	if o.Parallelism < 0 {
		return invalidParam("Parallelism", o.Parallelism, ">= 0")
	}
	if o.StateBackend != nil && !keyed {
		return invalidParam("StateBackend", "set", "none for a query without keyed state")
	}
	if o.StateBackend != nil && session {
		return invalidParam("StateBackend", "set", "none for session windows (the backends hold tumbling, sliding and global windows)")
	}
	if _, err := o.edge(); err != nil {
		return err
	}
	return nil
}

// edge is the keyed edge Partitioner names.
func (o Options) edge() (runtime.Edge, error) {
	kind := o.Partitioner
	if kind == "" {
		kind = "auto"
	}
	e, err := runtime.Kind(kind)
	if err != nil {
		return runtime.Edge{}, fmt.Errorf("%w: Partitioner: %w", ErrInvalidParameter, err)
	}
	return e, nil
}

// aggOpts are the options of a keyed window aggregation: the edge, the
// parallelism, the state backend and the windows.
func (o Options) aggOpts(win operators.Windows) ([]runtime.AggOpt, error) {
	e, err := o.edge()
	if err != nil {
		return nil, err
	}
	opts := []runtime.AggOpt{runtime.Via(e), runtime.Window(win)}
	if o.Parallelism > 0 {
		opts = append(opts, runtime.Parallelism(o.Parallelism))
	}
	if o.StateBackend != nil {
		opts = append(opts, runtime.KeyedStateBackend(o.StateBackend))
	}
	return opts, nil
}

// stageOpts are the options of a stateless stage after a keyed one: its
// parallelism follows the keyed stage's.
func (o Options) stageOpts() []runtime.StageOpt {
	if o.Parallelism > 0 {
		return []runtime.StageOpt{runtime.Parallelism(o.Parallelism)}
	}
	return nil
}

// ProcessingTime returns q12's processing clock: event number n is
// processed at n * 10^9 / rate ns (rate <= 0: DefaultProcessingRate).
// It is a deterministic stand-in for the wall clock: the order in which
// a source of rate events per second ingests the stream. A source of q12
// takes it as its time (runtime.EventTime(query.ProcessingTime(rate))).
func ProcessingTime(rate int64) func(nexmark.Event) int64 {
	if rate <= 0 {
		rate = DefaultProcessingRate
	}
	return func(e nexmark.Event) int64 { return procTime(e.Number, rate) }
}

// procTime is n * 10^9 / rate without overflow for n < 2^63 / 10^9 · rate.
func procTime(n, rate int64) int64 {
	return n/rate*int64(time.Second) + n%rate*int64(time.Second)/rate
}

// bids keeps the bids of src, unkeyed, on the source's workers.
func bids(src *runtime.Stream[nexmark.Event], name string) *runtime.Stream[nexmark.Event] {
	return runtime.Filter(src, name+"/bids", isBid)
}

func isBid(e nexmark.Event) bool { return e.Kind == nexmark.KindBid }

// idKey is the key of an id: SplitMix64, a bijection, so distinct ids
// never share a key.
func idKey(id int64) uint64 { return stream.HashUint64(uint64(id)) }

// pairKey is the key of two ids: a bijection of both while each is below
// 2^32 (2^32 auctions take 7·10^10 events at the default proportions),
// so distinct pairs never share a key.
func pairKey(a, b int64) uint64 { return stream.HashUint64(uint64(a)<<32 | uint64(uint32(b))) }
