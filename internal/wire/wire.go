// Package wire holds the little binary-encoding helpers of checkpoint
// state: appends that grow the caller's buffer, and a Reader with a sticky
// error that never panics on damaged input. Integers are uvarints (zigzag
// for signed values) unless fixed width is asked for; byte strings carry a
// uvarint length. A Reader refuses non-canonical varints, so every value
// has one encoding.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt reports bytes that are not a valid encoding.
var ErrCorrupt = errors.New("corrupt encoding")

// AppendUvarint appends x as a uvarint.
func AppendUvarint(dst []byte, x uint64) []byte { return binary.AppendUvarint(dst, x) }

// AppendVarint appends x zigzag-encoded as a uvarint.
func AppendVarint(dst []byte, x int64) []byte { return binary.AppendVarint(dst, x) }

// AppendU64 appends x as 8 little-endian bytes.
func AppendU64(dst []byte, x uint64) []byte { return binary.LittleEndian.AppendUint64(dst, x) }

// AppendBool appends b as one byte, 0 or 1.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendBytes appends b with its uvarint length.
func AppendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// AppendString appends s with its uvarint length.
func AppendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

// BeginPrefixed starts a length-prefixed value appended in place: append
// the value to the returned slice, then call EndPrefixed with the mark.
// A value under 128 bytes costs no copy; a longer one is moved once to
// make room for its length.
func BeginPrefixed(dst []byte) (out []byte, mark int) { return append(dst, 0), len(dst) }

// EndPrefixed writes the length of what was appended since BeginPrefixed
// returned mark, as Bytes reads it.
func EndPrefixed(dst []byte, mark int) []byte {
	n := len(dst) - mark - 1
	if n < 0x80 {
		dst[mark] = byte(n)
		return dst
	}
	l := uvarintLen(uint64(n))
	dst = append(dst, make([]byte, l-1)...)
	copy(dst[mark+l:], dst[mark+1:mark+1+n])
	binary.PutUvarint(dst[mark:], uint64(n))
	return dst
}

// Reader decodes what the Append functions wrote. The first failure sticks:
// later reads return zero values, and Err (or Done) reports it, naming what
// was being read.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first failure, nil if none.
func (r *Reader) Err() error { return r.err }

// Len is the number of bytes not yet read.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Fail records a failure found by the caller (a value out of its domain).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s (at byte %d)", ErrCorrupt, fmt.Sprintf(format, args...), r.off)
	}
}

// Done reports the first failure, or trailing bytes.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.b) {
		r.Fail("%d trailing bytes", len(r.b)-r.off)
	}
	return r.err
}

// Uvarint reads a canonical uvarint. The common case, one byte, inlines.
func (r *Reader) Uvarint(what string) uint64 {
	if off := r.off; uint(off) < uint(len(r.b)) && r.b[off] < 0x80 && r.err == nil {
		// One byte is always canonical.
		r.off = off + 1
		return uint64(r.b[off])
	}
	return r.uvarint(what)
}

func (r *Reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	x, n := DecodeUvarint(r.b[r.off:])
	if n <= 0 {
		r.Fail("%s: bad uvarint", what)
		return 0
	}
	r.off += n
	return x
}

// DecodeUvarint decodes a canonical uvarint from the start of b and
// returns it and its length, or 0 and n <= 0 when b holds none (it is
// empty, cut short, overflows 64 bits, or has a redundant last byte, as
// a longer-than-shortest encoding has).
func DecodeUvarint(b []byte) (uint64, int) {
	x, n := binary.Uvarint(b)
	if n > 1 && b[n-1] == 0 {
		return 0, -1
	}
	return x, n
}

// Varint reads a canonical zigzag varint.
func (r *Reader) Varint(what string) int64 {
	u := r.Uvarint(what)
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// Int reads a uvarint that must be at most max, as an int.
func (r *Reader) Int(max int, what string) int {
	x := r.Uvarint(what)
	if x > uint64(max) {
		r.Fail("%s = %d, want at most %d", what, x, max)
		return 0
	}
	return int(x)
}

// Count reads a uvarint count of items, each at least minSize bytes, that
// the remaining input could hold: a damaged count never makes the caller
// allocate more than the input's size.
func (r *Reader) Count(minSize int, what string) int {
	x := r.Uvarint(what)
	if r.err != nil {
		return 0
	}
	if x > uint64(math.MaxInt32) || minSize > 0 && x > uint64(r.Len()/minSize) {
		r.Fail("%s = %d, more than the %d bytes left can hold", what, x, r.Len())
		return 0
	}
	return int(x)
}

// U64 reads 8 little-endian bytes.
func (r *Reader) U64(what string) uint64 {
	if off := r.off; off+8 <= len(r.b) && r.err == nil {
		r.off = off + 8
		return binary.LittleEndian.Uint64(r.b[off : off+8])
	}
	return r.u64(what)
}

func (r *Reader) u64(what string) uint64 {
	if !r.need(8, what) {
		return 0
	}
	x := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return x
}

// Fixed32 reads 4 little-endian bytes.
func (r *Reader) Fixed32(what string) uint32 {
	if !r.need(4, what) {
		return 0
	}
	x := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return x
}

// Next reads the next n bytes, a sub-slice of the input (not a copy).
func (r *Reader) Next(n int, what string) []byte {
	if n < 0 || !r.need(n, what) {
		r.Fail("%s: %d bytes", what, n)
		return nil
	}
	b := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// Rest reads every remaining byte (a sub-slice of the input).
func (r *Reader) Rest() []byte {
	if r.err != nil {
		return nil
	}
	b := r.b[r.off:len(r.b):len(r.b)]
	r.off = len(r.b)
	return b
}

// Byte reads one byte.
func (r *Reader) Byte(what string) byte {
	if !r.need(1, what) {
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// Bool reads a byte that must be 0 or 1.
func (r *Reader) Bool(what string) bool {
	b := r.Byte(what)
	if b > 1 {
		r.Fail("%s = %d, want 0 or 1", what, b)
	}
	return b == 1
}

// Bytes reads a length-prefixed byte string, a sub-slice of the input (not
// a copy). The common case, a length under 128, inlines.
func (r *Reader) Bytes(what string) []byte {
	if off := r.off; uint(off) < uint(len(r.b)) && r.err == nil {
		if end := off + 1 + int(r.b[off]); r.b[off] < 0x80 && end <= len(r.b) {
			r.off = end
			return r.b[off+1 : end : end]
		}
	}
	return r.bytes(what)
}

func (r *Reader) bytes(what string) []byte {
	n := r.Uvarint(what)
	if r.err != nil {
		return nil
	}
	if n > uint64(r.Len()) {
		r.Fail("%s: length %d, %d bytes left", what, n, r.Len())
		return nil
	}
	b := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return b
}

// String reads a length-prefixed string of at most max bytes.
func (r *Reader) String(max int, what string) string {
	b := r.Bytes(what)
	if len(b) > max {
		r.Fail("%s: %d bytes, want at most %d", what, len(b), max)
		return ""
	}
	return string(b)
}

func (r *Reader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if r.Len() < n {
		r.Fail("%s: %d bytes left, want %d", what, r.Len(), n)
		return false
	}
	return true
}

// uvarintLen is the length of x's shortest uvarint encoding.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}
