package sketch

import (
	"errors"
	"math/bits"
)

// ErrEmpty reports a query that needs at least one value (a quantile, a
// CDF) on a sketch that has none. It is returned wrapped; test with
// errors.Is.
var ErrEmpty = errors.New("sketch: empty sketch")

// The quantile sketches' decoders accept only canonical encodings (every
// encoding decodes to a sketch that re-encodes to the same bytes), so they
// read uvarints in their shortest form only.

// uvarintShortest reads a uvarint, failing d unless it is in its shortest
// form.
func uvarintShortest(d *decoder, what string) uint64 {
	before := len(d.b)
	v := d.uvarint(what)
	if d.err == nil && before-len(d.b) != (bits.Len64(v|1)+6)/7 {
		d.fail("%s: uvarint %d not in its shortest form", what, v)
	}
	return v
}

// countShortest is decoder.count over uvarintShortest: an element count at
// most max, each element taking at least minSize of the bytes left.
func countShortest(d *decoder, max uint64, minSize int, what string) int {
	n := uvarintShortest(d, what)
	switch {
	case d.err != nil:
		return 0
	case n > max:
		d.fail("%s %d exceeds the limit %d", what, n, max)
		return 0
	case minSize > 0 && n > uint64(len(d.b)/minSize):
		d.fail("%s %d needs at least %d bytes, have %d", what, n, n*uint64(minSize), len(d.b))
		return 0
	}
	return int(n)
}
