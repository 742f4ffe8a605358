package partition

import (
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/internal/wire"
)

// ErrCorrupt reports a partitioner state that RestoreState cannot take:
// damaged, or encoded by a partitioner of another kind or worker count.
var ErrCorrupt = errors.New("partition: corrupt state")

// Snapshotter is implemented by partitioners whose placement depends on
// what they have routed (loads, a detector's windows, a round-robin
// cursor), so that a checkpointed job restored from a snapshot routes the
// next keys as the original would have. AppendState appends an encoding of
// that state to dst without changing it; RestoreState, on a partitioner
// made by the same factory (kind, options, worker count), replaces its
// state with an encoded one, or fails with an error wrapping ErrCorrupt
// and leaves it unchanged. Every kind but Hash, which keeps no state,
// implements it; the head-aware kinds save their detector with them (see
// Detector, "Checkpoints"). AppendState allocates nothing but what dst
// needs to grow, so it can run at every checkpoint; the encodings are
// versioned, and docs/results/partitioning.md ("Partitioner state in a checkpoint")
// gives their sizes. Like Route, neither is safe for concurrent use.
type Snapshotter interface {
	AppendState(dst []byte) ([]byte, error)
	RestoreState(b []byte) error
}

func corruptState(kind string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, kind, err)
}

// AppendState implements Snapshotter: the next worker.
func (s *shuffle) AppendState(dst []byte) ([]byte, error) {
	return wire.AppendUvarint(append(dst, 'r'), uint64(s.next)), nil
}

// RestoreState implements Snapshotter.
func (s *shuffle) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	if r.Byte("kind") != 'r' {
		r.Fail("not a shuffle state")
	}
	next := r.Int(s.n-1, "next")
	if err := r.Done(); err != nil {
		return corruptState("shuffle", err)
	}
	s.next = next
	return nil
}

// appendLoads appends a load vector.
func appendLoads(dst []byte, load []uint64) []byte {
	dst = wire.AppendUvarint(dst, uint64(len(load)))
	for _, l := range load {
		dst = wire.AppendUvarint(dst, l)
	}
	return dst
}

// readLoads reads a load vector of exactly len(into) workers into a new
// slice.
func readLoads(r *wire.Reader, n int) []uint64 {
	if got := r.Uvarint("workers"); got != uint64(n) && r.Err() == nil {
		r.Fail("%d workers, want %d", got, n)
	}
	if r.Err() != nil {
		return nil
	}
	load := make([]uint64, n)
	for i := range load {
		if load[i] = r.Uvarint("load"); load[i] >= 1<<62 {
			r.Fail("load %d, want below 2^62", load[i])
		}
	}
	return load
}

// AppendState implements Snapshotter: the loads, exact (the pending
// increment added), and the tie salt.
func (p *pkg) AppendState(dst []byte) ([]byte, error) {
	dst = appendLoads(append(dst, 'p'), p.loads())
	return wire.AppendU64(dst, p.tie), nil
}

// RestoreState implements Snapshotter.
func (p *pkg) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	if r.Byte("kind") != 'p' {
		r.Fail("not a pkg state")
	}
	load := readLoads(r, len(p.load))
	tie := r.U64("tie")
	if err := r.Done(); err != nil {
		return corruptState("pkg", err)
	}
	copy(p.load, load)
	p.tie, p.prev, p.pend = tie, 0, 0
	return nil
}
