package datasets

import (
	"slices"

	"github.com/skewerhq/skewer/stream"
)

// Corpus is a real key stream read from a file and held in memory: the keys
// in file order, each the sketch.Hash of its original text, and the text of
// every distinct key so that KeyName recovers it. A Corpus is read-only once
// loaded and safe for concurrent use; each Stream it returns is a separate
// reader.
type Corpus struct {
	path  string
	recs  []stream.Record
	names map[uint64]string
}

// LoadWords reads a whole text file into memory as a stream of words,
// tokenised as OpenWords says. It reads the file through OpenWords, so a
// malformed file fails as there (ErrFormat naming the file and the line);
// a file without a word gives ErrEmpty. It holds 16 bytes per word and the
// name of every distinct word: for tests and benchmarks; a caller that
// needs only a prefix of a file opens it with OpenWords.
func LoadWords(path string) (*Corpus, error) { return load(OpenWords(path)) }

// LoadItems reads a whole market-basket file into memory as a stream of
// item ids, tokenised as OpenItems says; errors and memory are as for
// LoadWords.
func LoadItems(path string) (*Corpus, error) { return load(OpenItems(path)) }

// load drains a file stream into a Corpus.
func load(s *FileStream, err error) (*Corpus, error) {
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var recs []stream.Record
	for {
		recs = slices.Grow(recs, 4096)
		n := s.Fill(recs[len(recs):cap(recs)])
		recs = recs[:len(recs)+n]
		if n == 0 {
			break
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return &Corpus{path: s.path, recs: recs, names: s.names}, nil
}

// Len returns the number of keys in the stream (N).
func (c *Corpus) Len() int { return len(c.recs) }

// Distinct returns the number of distinct keys.
func (c *Corpus) Distinct() int { return len(c.names) }

// Path returns the file the corpus was read from.
func (c *Corpus) Path() string { return c.path }

// KeyName implements stream.Namer: the original word or item id of a key.
func (c *Corpus) KeyName(key uint64) (string, bool) {
	name, ok := c.names[key]
	return name, ok
}

// Records returns the whole stream. The slice is shared: do not modify it.
func (c *Corpus) Records() []stream.Record { return c.recs }

// Stream returns a new reader over the corpus, from its first key.
func (c *Corpus) Stream() *NamedStream {
	return &NamedStream{Slice: stream.FromRecords(c.recs), names: c}
}

// NamedStream is a stream.Slice of records whose keys have names: a
// stream.Stream and a stream.Namer.
type NamedStream struct {
	*stream.Slice[stream.Record]
	names stream.Namer
}

// KeyName implements stream.Namer.
func (s *NamedStream) KeyName(key uint64) (string, bool) { return s.names.KeyName(key) }
