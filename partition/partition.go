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

// Candidater is implemented by partitioners whose every key has a fixed
// set of candidate workers, the only workers Route ever gives it (PKG: two
// distinct workers, or one when n = 1). Candidates appends the key's
// candidates to dst, in the same order for the same key and worker count,
// without changing the partitioner's state. A caller that knows more about
// the workers than the partitioner's own load counts may pick among them
// itself and keep placement: the Kafka producer (kafka.PartitionerOpt's
// Buffered) sends a record to the candidate partition with the fewest
// records buffered in the client.
type Candidater interface {
	Candidates(dst []int, key uint64) []int
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

// Hash is key grouping (kind "hash"): every tuple of a key goes to the same
// worker, hashx.Reduce(key, n). It needs no merge stage and balances only
// when no key is hot. It is the one kind this package exports as a type:
// its Route is a pure function of the key that the compiler inlines, so a
// hot loop that holds a *Hash (the runtime's sources do) routes with one
// multiplication and no call. Safe for concurrent use (it holds no state
// but n). The zero Hash is not usable: its methods panic with a message
// naming NewHash.
type Hash struct{ n int }

// NewHash returns key grouping over n workers. Options are validated as
// for every kind; none changes key grouping.
func NewHash(workers int, opts ...Option) (*Hash, error) {
	if _, err := newConfig(opts); err != nil {
		return nil, err
	}
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	return &Hash{n: workers}, nil
}

// zeroHash is the panic of a zero Hash.
const zeroHash = "partition: Hash used without NewHash (the zero Hash has no workers)"

// Route implements Partitioner.
func (h *Hash) Route(key uint64) int {
	if h.n == 0 {
		panic(zeroHash)
	}
	return hashx.Reduce(key, h.n)
}

// RouteBatch implements BatchRouter.
func (h *Hash) RouteBatch(keys []uint64, dst []int) {
	n := h.n
	if n == 0 {
		panic(zeroHash)
	}
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = hashx.Reduce(k, n)
	}
}

// Workers implements Partitioner.
func (h *Hash) Workers() int {
	if h.n == 0 {
		panic(zeroHash)
	}
	return h.n
}

// shuffle deals tuples round-robin, ignoring keys: perfect balance, and
// every key may reach every worker.
type shuffle struct {
	n, next int
}

func newShuffle(workers int) *shuffle { return &shuffle{n: workers} }

// Route implements Partitioner.
func (s *shuffle) Route(uint64) int {
	w := s.next
	s.next++
	if s.next == s.n {
		s.next = 0
	}
	return w
}

// RouteBatch implements BatchRouter.
func (s *shuffle) RouteBatch(keys []uint64, dst []int) {
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
func (s *shuffle) Workers() int { return s.n }

// SplitsKeys implements Splitter.
func (*shuffle) SplitsKeys() bool { return true }
