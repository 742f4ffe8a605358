package datasets

// Record is one tuple of a stream.
type Record struct {
	// Key is the 64-bit hash of the key (sketch.Hash of its bytes for real
	// data, a mixed rank for synthetic streams). Partitioners and sketches
	// take it as is.
	Key uint64
	// Time is the event time in nanoseconds since the Unix epoch, or 0 for
	// streams that carry no event time.
	Time int64
}

// Stream yields records in batches. Fill writes up to len(dst) records into
// dst and returns how many it wrote; it returns fewer than len(dst) only when
// the stream ends, and 0 once it has ended. Fill never allocates in steady
// state, and a stream is deterministic: the same constructor arguments and
// seed give the same records. A Stream is not safe for concurrent use.
type Stream interface {
	Fill(dst []Record) int
}

// Namer is implemented by streams whose keys have an original form (a word,
// an item id): KeyName returns it for a key hash the stream produced.
type Namer interface {
	KeyName(key uint64) (string, bool)
}

// SliceStream replays a fixed slice of records. It is the simplest Stream,
// for tests and for replaying a stream held in memory.
type SliceStream struct {
	recs []Record
	pos  int
}

// FromRecords returns a stream over recs. The slice is not copied.
func FromRecords(recs []Record) *SliceStream { return &SliceStream{recs: recs} }

// FromKeys returns a stream over keys, with no event time.
func FromKeys(keys []uint64) *SliceStream {
	recs := make([]Record, len(keys))
	for i, k := range keys {
		recs[i].Key = k
	}
	return &SliceStream{recs: recs}
}

// Fill implements Stream.
func (s *SliceStream) Fill(dst []Record) int {
	n := copy(dst, s.recs[s.pos:])
	s.pos += n
	return n
}

// Reset rewinds the stream to its first record.
func (s *SliceStream) Reset() { s.pos = 0 }

// Len is the total number of records.
func (s *SliceStream) Len() int { return len(s.recs) }
