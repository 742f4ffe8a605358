package stream

// Slice replays a fixed slice of values: the simplest Filler, for tests
// and for replaying what is held in memory. A Slice[Record] is a Stream.
type Slice[T any] struct {
	vs  []T
	pos int
}

// FromSlice returns a Filler over vs. The slice is not copied.
func FromSlice[T any](vs []T) *Slice[T] { return &Slice[T]{vs: vs} }

// FromRecords returns a Stream over recs. The slice is not copied.
func FromRecords(recs []Record) *Slice[Record] { return FromSlice(recs) }

// FromKeys returns a Stream over keys, with no event time.
func FromKeys(keys []uint64) *Slice[Record] {
	recs := make([]Record, len(keys))
	for i, k := range keys {
		recs[i].Key = k
	}
	return FromSlice(recs)
}

// Fill implements Filler.
func (s *Slice[T]) Fill(dst []T) int {
	n := copy(dst, s.vs[s.pos:])
	s.pos += n
	return n
}

// Reset rewinds the slice to its first value.
func (s *Slice[T]) Reset() { s.pos = 0 }

// Len is the total number of values.
func (s *Slice[T]) Len() int { return len(s.vs) }
