package stream

// Record is one tuple of a keyed stream.
type Record struct {
	// Key is the 64-bit hash of the key (HashBytes of its bytes for real
	// data, a mixed rank for synthetic streams). Partitioners and sketches
	// take it as is.
	Key uint64
	// Time is the event time in nanoseconds since the Unix epoch, or 0 for
	// streams that carry no event time.
	Time int64
}

// Stream yields records in batches. Fill writes up to len(dst) records
// into dst and returns how many it wrote; it returns fewer than len(dst)
// only when the stream ends, and 0 once it has ended. Fill never allocates
// in steady state. A Stream is not safe for concurrent use.
type Stream interface {
	Fill(dst []Record) int
}

// Filler is Stream for records of any type: Fill writes up to len(dst)
// values into dst and returns how many it wrote, fewer than len(dst) only
// at the end, and 0 once it has ended. Every Stream is a Filler[Record].
type Filler[T any] interface {
	Fill(dst []T) int
}

// Namer is implemented by streams whose keys have an original form (a
// word, an item id): KeyName returns it for a key hash the stream
// produced.
type Namer interface {
	KeyName(key uint64) (string, bool)
}

// Err returns the error that ended s early when s can end on one (it has
// an Err() error method), and nil for any other stream. A caller that
// reads a stream which may come from a file checks it once it stops
// reading: a stream that ends on an error ends early, and its records
// alone do not say so.
func Err(s any) error {
	if e, ok := s.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}
