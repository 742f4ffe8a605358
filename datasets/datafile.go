package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// MaxTokenSize bounds what the loaders hold of one line: a word, an item id
// or a frequency-table line (not counting its newline) longer than
// MaxTokenSize bytes is an ErrFormat error. A file of one huge line is
// refused once MaxTokenSize bytes of it are read, never buffered whole.
const MaxTokenSize = 64 << 10

// readBufferSize is the buffer of decompressed bytes a dataReader scans: a
// line of MaxTokenSize bytes and its newline fit in it.
const readBufferSize = MaxTokenSize + 4<<10

// excerptBytes is the most of an offending line an error message quotes.
const excerptBytes = 40

// dataReader reads the content of a data file, gzip-compressed (recognised
// by its magic bytes, whatever the name) or plain, through one buffer of
// readBufferSize bytes, and counts lines for error messages.
type dataReader struct {
	path string
	f    *os.File
	gz   *gzip.Reader // nil for a plain file
	src  io.Reader
	buf  []byte
	pos  int   // next unread byte of buf
	end  int   // end of the bytes read into buf
	eof  bool  // src is exhausted
	line int64 // the line number of buf[pos], from 1
	// gzipped: the file starts with the gzip magic bytes. afterNL: the
	// line readLine returned last ended with a newline.
	gzipped, afterNL bool
}

// openData opens a data file. A missing or unreadable file gives the os
// error (which names the path), a directory or a damaged gzip header
// ErrFormat.
func openData(path string) (*dataReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("datasets: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is a directory, not a data file", ErrFormat, path)
	}
	d := &dataReader{path: path, f: f, line: 1}
	br := bufio.NewReaderSize(f, 32<<10)
	// A read error here is kept by br and returned by the first read.
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		d.gzipped = true
		d.gz, err = gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, d.readErr(err)
		}
		d.src = d.gz
	} else {
		d.src = br
	}
	d.buf = make([]byte, readBufferSize)
	return d, nil
}

// fill moves the unread bytes to the front of buf and reads at least one
// more, or sets eof.
func (d *dataReader) fill() error {
	if d.eof {
		return nil
	}
	d.end = copy(d.buf, d.buf[d.pos:d.end])
	d.pos = 0
	for range 100 {
		n, err := d.src.Read(d.buf[d.end:])
		d.end += n
		if err == io.EOF {
			d.eof = true
			return nil
		}
		if err != nil {
			return d.readErr(err)
		}
		if n > 0 {
			return nil
		}
	}
	return d.readErr(io.ErrNoProgress)
}

// readErr describes an error of the underlying reader: an I/O error as
// such, anything else under gzip as damaged compressed data (ErrFormat).
func (d *dataReader) readErr(err error) error {
	var pe *fs.PathError
	if d.gzipped && !errors.As(err, &pe) {
		return fmt.Errorf("%w: %s line %d: damaged or truncated gzip data: %w", ErrFormat, d.path, d.line, err)
	}
	return fmt.Errorf("datasets: %s line %d: %w", d.path, d.line, err)
}

// errorf builds an ErrFormat error naming the file and the current line.
func (d *dataReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s line %d: %s", ErrFormat, d.path, d.line, fmt.Sprintf(format, args...))
}

// readLine returns the next line without its '\n' (a '\r' before it is
// kept), valid until the next call, and sets d.line to its number; ok is
// false at the end of the file. A line longer than MaxTokenSize bytes or
// holding a NUL byte is an error.
func (d *dataReader) readLine() (line []byte, ok bool, err error) {
	if d.afterNL {
		d.line++
		d.afterNL = false
	}
	for {
		rest := d.buf[d.pos:d.end]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 && !d.eof && len(rest) <= MaxTokenSize {
			if err := d.fill(); err != nil {
				return nil, false, err
			}
			continue
		}
		if i < 0 && len(rest) == 0 {
			return nil, false, nil
		}
		line = rest
		if i >= 0 {
			line = rest[:i]
		}
		if bytes.IndexByte(line[:min(len(line), MaxTokenSize+1)], 0) >= 0 {
			return nil, false, d.errNUL()
		}
		if len(line) > MaxTokenSize {
			return nil, false, d.errorf("longer than %d bytes (%s)", MaxTokenSize, excerpt(line))
		}
		d.pos += len(line)
		if i >= 0 {
			d.pos++
			d.afterNL = true
		}
		return line, true, nil
	}
}

func (d *dataReader) errNUL() error {
	return d.errorf("NUL byte: binary data, not text")
}

// Read implements io.Reader over the decompressed content.
func (d *dataReader) Read(p []byte) (int, error) {
	if d.buf == nil {
		return 0, fmt.Errorf("datasets: %s: %w", d.path, os.ErrClosed)
	}
	if d.pos == d.end {
		if err := d.fill(); err != nil {
			return 0, err
		}
		if d.pos == d.end {
			return 0, io.EOF
		}
	}
	n := copy(p, d.buf[d.pos:d.end])
	d.line += int64(bytes.Count(p[:n], []byte{'\n'}))
	d.pos += n
	return n, nil
}

// Close releases the file and the buffer; it is safe to call twice.
func (d *dataReader) Close() error {
	if d.buf == nil {
		return nil
	}
	d.buf, d.pos, d.end = nil, 0, 0
	var err error
	if d.gz != nil {
		err = d.gz.Close()
	}
	if cerr := d.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("datasets: %w", cerr)
	}
	return err
}

// OpenFile opens a data file for reading its content: a gzip-compressed
// file (recognised by its magic bytes, whatever its name) is decompressed
// as it is read, a plain file is read as it is. A directory or a damaged
// gzip header is an ErrFormat error, damaged compressed data an ErrFormat
// error from Read; an absent file gives the os error, which names the path.
// The caller closes the reader.
func OpenFile(path string) (io.ReadCloser, error) {
	d, err := openData(path)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// excerpt quotes at most excerptBytes bytes of b, escaped, with "…" when
// b is longer.
func excerpt(b []byte) string {
	if len(b) <= excerptBytes {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:excerptBytes])) + "…"
}
