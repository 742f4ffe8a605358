package partition

import (
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ErrInvalidParameter reports a constructor argument or option outside its
// domain; the message names it.
var ErrInvalidParameter = errors.New("partition: invalid parameter")

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

// Factory makes one Partitioner per source for n workers. Runtimes call it
// once per source so that load estimates stay local.
type Factory func(workers int) (Partitioner, error)

func checkWorkers(n int) error {
	if n <= 0 {
		return invalidParam("workers", n, "> 0")
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

// Workers implements Partitioner.
func (s *Shuffle) Workers() int { return s.n }

// SplitsKeys implements Splitter.
func (*Shuffle) SplitsKeys() bool { return true }
