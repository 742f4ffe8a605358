package stream

import (
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/internal/wire"
)

// ErrPosition reports a position that Seek cannot take: not one this kind
// of input wrote, damaged, or beyond the input's end.
var ErrPosition = errors.New("stream: invalid position")

// Positioner is implemented by inputs that can be replayed from a saved
// point (a slice, a seeded generator, a file): the sources a checkpointed
// job can restart from. AppendPosition appends an encoding of the point
// the next Fill starts from; Seek on an input built the same way (the same
// slice, generator parameters or file) makes its next Fill start there.
// Neither may be called concurrently with Fill. Seek leaves the input
// unchanged when it returns an error, which wraps ErrPosition.
//
// An iterator or a channel has no such point: a job that checkpoints
// refuses them when it is built.
type Positioner interface {
	AppendPosition(dst []byte) ([]byte, error)
	Seek(pos []byte) error
}

// AppendPosition implements Positioner: the index of the next value.
func (s *Slice[T]) AppendPosition(dst []byte) ([]byte, error) {
	return wire.AppendUvarint(dst, uint64(s.pos)), nil
}

// Seek implements Positioner.
func (s *Slice[T]) Seek(pos []byte) error {
	r := wire.NewReader(pos)
	p := r.Uvarint("index")
	if err := r.Done(); err != nil || p > uint64(len(s.vs)) {
		return fmt.Errorf("%w: slice position %x for %d values", ErrPosition, pos, len(s.vs))
	}
	s.pos = int(p)
	return nil
}

// Replayer makes an input replayable that can be opened again and then
// gives the same values (a seeded generator, a file): its position is the
// number of values it has given, and Seek opens the input again and skips
// that many, which costs O(position) reads. A Replayer[Record] is a
// Stream. Not safe for concurrent use.
type Replayer[T any] struct {
	open  func() (Filler[T], error)
	f     Filler[T]
	given uint64
	skip  []T
}

// Replay returns a Replayer over the input open opens, opened once now.
func Replay[T any](open func() (Filler[T], error)) (*Replayer[T], error) {
	if open == nil {
		return nil, fmt.Errorf("%w: Replay open is nil", ErrPosition)
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	return &Replayer[T]{open: open, f: f}, nil
}

// Fill implements Filler.
func (r *Replayer[T]) Fill(dst []T) int {
	n := r.f.Fill(dst)
	r.given += uint64(n)
	return n
}

// AppendPosition implements Positioner: the number of values given.
func (r *Replayer[T]) AppendPosition(dst []byte) ([]byte, error) {
	return wire.AppendUvarint(dst, r.given), nil
}

// Seek implements Positioner: it opens the input again and skips to pos.
func (r *Replayer[T]) Seek(pos []byte) error {
	rd := wire.NewReader(pos)
	p := rd.Uvarint("count")
	if err := rd.Done(); err != nil {
		return fmt.Errorf("%w: replay position %x", ErrPosition, pos)
	}
	f, err := r.open()
	if err != nil {
		return fmt.Errorf("%w: reopening the input: %w", ErrPosition, err)
	}
	if r.skip == nil {
		r.skip = make([]T, 4096)
	}
	for left := p; left > 0; {
		want := min(left, uint64(len(r.skip)))
		n := f.Fill(r.skip[:want])
		if n == 0 {
			return fmt.Errorf("%w: the input ends %d values before position %d", ErrPosition, left, p)
		}
		left -= uint64(n)
	}
	r.f, r.given = f, p
	return nil
}
