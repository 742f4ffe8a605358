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
