package datasets

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// FileStream is a key stream read lazily from a data file (gzip-compressed
// or plain): each Fill reads only as far into the file as the records it
// writes need, so a caller that stops calling Fill stops the reading. It
// holds one read buffer (about 100 KiB with gzip), the current token (at
// most MaxTokenSize bytes) and the name of every distinct key read so far,
// never the file. Keys are sketch.Hash of the token's bytes.
//
// The stream ends at the end of the file or at the first error: a format
// error (a NUL byte, a token longer than MaxTokenSize, damaged gzip data),
// an I/O error, or two tokens with the same 64-bit hash. Err tells which,
// and a stream that ends with no key at all reports ErrEmpty. The file is
// closed when the stream ends; Close closes it earlier.
//
// A FileStream implements stream.Stream and stream.Namer. It is not safe for concurrent
// use, KeyName included. The zero FileStream is not usable; open one with
// OpenWords or OpenItems.
type FileStream struct {
	r     *dataReader // nil once the stream has ended or been closed
	path  string
	items bool // items: whitespace-separated tokens; else words
	tok   []byte
	names map[uint64]string
	n     int64
	err   error
}

// OpenWords opens a text file as a stream of words: the text is lower-cased
// (Unicode case mapping) and split on every rune that is not in [a-z0-9'];
// each maximal run of those runes is one word. Invalid UTF-8 bytes separate
// words. The figures of data/README.md (pg135: 579,482 words, 23,029
// distinct, "the" at 7.09%) are computed so.
//
// A missing file gives the os error (which names the path); a directory or
// a damaged gzip header gives ErrFormat. Errors found while reading end the
// stream and are reported by Err.
func OpenWords(path string) (*FileStream, error) { return openStream(path, false) }

// OpenItems opens a market-basket file as a stream of item ids: one basket
// per line, items separated by ASCII white space, taken in file order (the
// FIMI format of retail.dat: 908,576 items, 16,470 distinct, item 39 at
// 5.58%). Item ids are arbitrary tokens, hashed as bytes. Errors are as for
// OpenWords.
func OpenItems(path string) (*FileStream, error) { return openStream(path, true) }

func openStream(path string, items bool) (*FileStream, error) {
	r, err := openData(path)
	if err != nil {
		return nil, err
	}
	return &FileStream{r: r, path: path, items: items, names: make(map[uint64]string)}, nil
}

// Fill implements stream.Stream: it reads up to len(dst) keys from the file. It
// writes fewer only when the stream ends (see Err). It allocates only for
// the name of a key not read before.
func (s *FileStream) Fill(dst []stream.Record) int {
	for i := range dst {
		if s.r == nil {
			return i
		}
		tok, err := s.next()
		if err != nil || tok == nil {
			s.end(err)
			return i
		}
		key := sketch.Hash(tok)
		if err := s.record(key, tok); err != nil {
			s.end(err)
			return i
		}
		dst[i] = stream.Record{Key: key}
		s.n++
	}
	return len(dst)
}

// record keeps the name of key the first time it is read; two different
// tokens with the same 64-bit hash are an error.
func (s *FileStream) record(key uint64, tok []byte) error {
	if name, ok := s.names[key]; !ok {
		s.names[key] = string(tok)
	} else if name != string(tok) {
		return s.r.errorf("keys %s and %s have the same 64-bit hash %#x", excerpt([]byte(name)), excerpt(tok), key)
	}
	return nil
}

// end closes the file and records why the stream ended: err, the error
// already in s.err, or ErrEmpty when no key was read.
func (s *FileStream) end(err error) {
	if s.err == nil {
		s.err = err
	}
	if s.err == nil && s.n == 0 {
		s.err = fmt.Errorf("%w: %s holds no keys", ErrEmpty, s.path)
	}
	if cerr := s.r.Close(); s.err == nil {
		s.err = cerr
	}
	s.r = nil
	s.tok = nil
}

// Err returns the error that ended the stream: nil while it is being read
// and after a clean end of the file, ErrEmpty when the file held no key,
// ErrFormat (naming the file and the line) for a malformed or damaged
// file, or the I/O error. A stream closed by Close before its end reports
// nil.
func (s *FileStream) Err() error { return s.err }

// Close ends the stream and closes the file; Fill then returns 0. It is safe
// to call more than once and after the stream has ended. KeyName still
// names the keys read.
func (s *FileStream) Close() error {
	if s.r == nil {
		return nil
	}
	err := s.r.Close()
	s.r, s.tok = nil, nil
	return err
}

// KeyName implements stream.Namer: the original word or item id of a key read so
// far.
func (s *FileStream) KeyName(key uint64) (string, bool) {
	name, ok := s.names[key]
	return name, ok
}

// Distinct returns the number of distinct keys read so far.
func (s *FileStream) Distinct() int { return len(s.names) }

// Path returns the file the stream reads.
func (s *FileStream) Path() string { return s.path }

// isWordByte reports whether b is one of [a-z0-9'].
func isWordByte(b byte) bool { return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '\'' }

// next returns the next token (valid until the next call), nil at the end
// of the file.
func (s *FileStream) next() ([]byte, error) {
	d := s.r
	s.tok = s.tok[:0]
	for {
		var ended bool
		var err error
		if s.items {
			d.pos, ended, err = s.scanItem(d.pos)
		} else {
			d.pos, ended, err = s.scanWord(d.pos)
		}
		switch {
		case err != nil:
			return nil, err
		case ended || d.eof && len(s.tok) > 0:
			return s.tok, nil
		case d.eof:
			return nil, nil
		}
		if err := d.fill(); err != nil {
			return nil, err
		}
	}
}

// scanWord scans the buffer from pos for the rest of a word, appending to
// s.tok; it returns where it stopped and whether the word ended there.
func (s *FileStream) scanWord(pos int) (int, bool, error) {
	d := s.r
	buf, tok := d.buf[:d.end], s.tok
	defer func() { s.tok = tok }()
	for pos < len(buf) {
		b := buf[pos]
		if b >= utf8.RuneSelf {
			if !d.eof && !utf8.FullRune(buf[pos:]) {
				break // the rest of the rune is not read yet
			}
			r, size := utf8.DecodeRune(buf[pos:])
			pos += size
			// Some runes lower-case to ASCII (KELVIN SIGN to 'k').
			if r = unicode.ToLower(r); r < utf8.RuneSelf && isWordByte(byte(r)) {
				b = byte(r)
			} else {
				b = ' '
			}
		} else {
			pos++
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
		}
		if isWordByte(b) {
			if len(tok) == MaxTokenSize {
				return pos, false, d.errorf("a word longer than %d bytes (%s)", MaxTokenSize, excerpt(tok))
			}
			tok = append(tok, b)
			continue
		}
		switch b {
		case '\n':
			d.line++
		case 0:
			return pos, false, d.errNUL()
		}
		if len(tok) > 0 {
			return pos, true, nil
		}
	}
	return pos, false, nil
}

// scanItem scans the buffer from pos for the rest of an item, as scanWord.
func (s *FileStream) scanItem(pos int) (int, bool, error) {
	d := s.r
	buf, tok := d.buf[:d.end], s.tok
	defer func() { s.tok = tok }()
	for pos < len(buf) {
		b := buf[pos]
		pos++
		switch {
		case isSpace(b):
			if b == '\n' {
				d.line++
			}
			if len(tok) > 0 {
				return pos, true, nil
			}
		case b == 0:
			return pos, false, d.errNUL()
		case len(tok) == MaxTokenSize:
			return pos, false, d.errorf("an item longer than %d bytes (%s)", MaxTokenSize, excerpt(tok))
		default:
			tok = append(tok, b)
		}
	}
	return pos, false, nil
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}
