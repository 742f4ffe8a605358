package datasets

import (
	"fmt"
	"os"
	"unicode"
	"unicode/utf8"

	"github.com/skewerhq/skewer/sketch"
)

// Corpus is a real key stream read from a file and held in memory: the keys
// in file order, each the sketch.Hash of its original text, and the text of
// every distinct key so that KeyName recovers it. A Corpus is read-only once
// loaded and safe for concurrent use; each Stream it returns is a separate
// reader.
type Corpus struct {
	path  string
	recs  []Record
	names map[uint64]string
	lines int
}

// LoadWords reads a text file as a stream of words: the text is lower-cased
// (Unicode case mapping) and split on every rune that is not in [a-z0-9'];
// each maximal run of those runes is one word. This is how the figures of
// ../shared/datasets/README.md were computed (pg135: 579,482 words, 23,029
// distinct, "the" at 7.09%).
func LoadWords(path string) (*Corpus, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	c := newCorpus(path)
	var tok []byte
	flush := func() error {
		if len(tok) == 0 {
			return nil
		}
		err := c.add(tok)
		tok = tok[:0]
		return err
	}
	for i := 0; i < len(data); {
		b := data[i]
		var r rune
		if b < utf8.RuneSelf {
			r, i = rune(b), i+1
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			var size int
			r, size = utf8.DecodeRune(data[i:])
			i += size
			r = unicode.ToLower(r)
		}
		if r == '\n' {
			c.lines++
		}
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '\'' {
			tok = append(tok, byte(r))
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return c.done()
}

// LoadItems reads a market-basket file as a stream of item ids: one basket
// per line, items separated by ASCII white space, taken in file order (the
// FIMI format of retail.dat: 908,576 items, 16,470 distinct, item 39 at
// 5.58%). Item ids are arbitrary tokens, hashed as strings.
func LoadItems(path string) (*Corpus, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	c := newCorpus(path)
	start := -1
	for i, b := range data {
		if isSpace(b) {
			if start >= 0 {
				if err := c.add(data[start:i]); err != nil {
					return nil, err
				}
				start = -1
			}
			if b == '\n' {
				c.lines++
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		if err := c.add(data[start:]); err != nil {
			return nil, err
		}
	}
	return c.done()
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// readFile reads a data file; a missing or unreadable file gives the os
// error, which names the path.
func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	return data, nil
}

func newCorpus(path string) *Corpus {
	return &Corpus{path: path, names: make(map[uint64]string)}
}

// add appends one key; two different texts with the same 64-bit hash are
// reported rather than silently merged.
func (c *Corpus) add(tok []byte) error {
	h := sketch.Hash(tok)
	if name, ok := c.names[h]; !ok {
		c.names[h] = string(tok)
	} else if name != string(tok) {
		return fmt.Errorf("%w: %s: keys %q and %q have the same 64-bit hash %#x", ErrFormat, c.path, name, tok, h)
	}
	c.recs = append(c.recs, Record{Key: h})
	return nil
}

func (c *Corpus) done() (*Corpus, error) {
	if len(c.recs) == 0 {
		return nil, fmt.Errorf("%w: %s holds no keys", ErrEmpty, c.path)
	}
	return c, nil
}

// Len returns the number of keys in the stream (N).
func (c *Corpus) Len() int { return len(c.recs) }

// Distinct returns the number of distinct keys.
func (c *Corpus) Distinct() int { return len(c.names) }

// Path returns the file the corpus was read from.
func (c *Corpus) Path() string { return c.path }

// KeyName implements Namer: the original word or item id of a key.
func (c *Corpus) KeyName(key uint64) (string, bool) {
	name, ok := c.names[key]
	return name, ok
}

// Records returns the whole stream. The slice is shared: do not modify it.
func (c *Corpus) Records() []Record { return c.recs }

// Stream returns a new reader over the corpus, from its first key.
func (c *Corpus) Stream() *NamedStream {
	return &NamedStream{SliceStream: SliceStream{recs: c.recs}, names: c}
}

// NamedStream is a SliceStream whose keys have names.
type NamedStream struct {
	SliceStream
	names Namer
}

// KeyName implements Namer.
func (s *NamedStream) KeyName(key uint64) (string, bool) { return s.names.KeyName(key) }
