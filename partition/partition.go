package partition

import (
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ErrInvalidParameter reports a constructor argument or option outside its
// domain; the message names it.
var ErrInvalidParameter = errors.New("partition: invalid parameter")

// ErrEmptyStream reports a simulation whose Config.Stream yielded no
// records: a Stream is read once, so one already drained (by datasets.Count,
// or an earlier Run) is empty.
var ErrEmptyStream = errors.New("partition: empty stream")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// Partitioner routes key hashes to workers. One instance serves one source:
// partitioners that balance load keep the load this source has sent, as
// partial key grouping prescribes. Route never allocates. A Partitioner is
// not safe for concurrent use.
type Partitioner interface {
	// Route returns the worker, in [0, Workers()), for a key hash.
	Route(key uint64) int
	// Workers is the number of workers n.
	Workers() int
}

// Splitter is implemented by partitioners that may send one key to several
// workers (shuffle, PKG, D-Choices, W-Choices). Keyed state downstream of
// such a partitioner holds partial results that a merge stage must combine.
type Splitter interface {
	SplitsKeys() bool
}

// SplitsKeys reports whether p may route one key to more than one worker.
func SplitsKeys(p Partitioner) bool {
	s, ok := p.(Splitter)
	return ok && s.SplitsKeys()
}

// BatchRouter is implemented by partitioners that route many keys in one
// call: RouteBatch(keys, dst) sets dst[i] to the worker of keys[i], exactly
// as len(keys) calls of Route in order would (same workers, same state
// after), without an interface call per key, and with the state a tuple
// leaves for the next one (PKG's last choice, for one) kept in registers.
// dst must be at least as long as keys. Every partitioner of this package
// implements it; RouteBatch (the function) serves any Partitioner.
type BatchRouter interface {
	RouteBatch(keys []uint64, dst []int)
}

// RouteBatch sets dst[i] to p's worker for keys[i], through p's own
// RouteBatch when it has one and Route otherwise. dst must be at least as
// long as keys.
func RouteBatch(p Partitioner, keys []uint64, dst []int) {
	if b, ok := p.(BatchRouter); ok {
		b.RouteBatch(keys, dst)
		return
	}
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = p.Route(k)
	}
}

// Factory makes one Partitioner per source for n workers. Runtimes call it
// once per source so that load estimates stay local.
type Factory func(workers int) (Partitioner, error)

// MaxWorkers is the most workers a partitioner routes to (and the most
// parallel instances a runtime stage has). Every constructor and factory
// of this package rejects more, naming workers, before allocating: per
// source a partitioner holds O(n) loads and, with the default threshold
// θ = 1/(5n), a detector whose memory grows as 1/θ.
const MaxWorkers = 4096

func checkWorkers(n int) error {
	if n < 1 || n > MaxWorkers {
		return invalidParam("workers", n, fmt.Sprintf("in [1, MaxWorkers = %d]", MaxWorkers))
	}
	return nil
}

// Hash is key grouping: every tuple of a key goes to the same worker,
// hashx.Reduce(key, n). It needs no merge stage and balances only when no
// key is hot.
type Hash struct{ n int }

// NewHash returns key grouping over n workers.
func NewHash(workers int) (*Hash, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	return &Hash{n: workers}, nil
}

// Route implements Partitioner.
func (h *Hash) Route(key uint64) int { return hashx.Reduce(key, h.n) }

// RouteBatch implements BatchRouter.
func (h *Hash) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	n := h.n
	for i, k := range keys {
		dst[i] = hashx.Reduce(k, n)
	}
}

// Workers implements Partitioner.
func (h *Hash) Workers() int { return h.n }

// Shuffle deals tuples round-robin, ignoring keys: perfect balance, and every
// key may reach every worker.
type Shuffle struct {
	n, next int
}

// NewShuffle returns round-robin routing over n workers.
func NewShuffle(workers int) (*Shuffle, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	return &Shuffle{n: workers}, nil
}

// Route implements Partitioner.
func (s *Shuffle) Route(uint64) int {
	w := s.next
	s.next++
	if s.next == s.n {
		s.next = 0
	}
	return w
}

// RouteBatch implements BatchRouter.
func (s *Shuffle) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	w, n := s.next, s.n
	for i := range keys {
		dst[i] = w
		if w++; w == n {
			w = 0
		}
	}
	s.next = w
}

// Workers implements Partitioner.
func (s *Shuffle) Workers() int { return s.n }

// SplitsKeys implements Splitter.
func (*Shuffle) SplitsKeys() bool { return true }
