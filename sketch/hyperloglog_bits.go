package sketch

import (
	"encoding/binary"
	"math/bits"
)

// bitWriter packs bit fields LSB first into little-endian words: appended
// to w, or, if bytes is set, to b as four little-endian bytes each (the
// encoding's byte stream, written into the caller's buffer).
type bitWriter struct {
	w     []uint32
	b     []byte
	bytes bool
	acc   uint64
	n     uint
}

// put appends the low k <= 32 bits of v (v has no bits above k).
func (w *bitWriter) put(v uint64, k uint) {
	w.acc |= v << w.n
	w.n += k
	if w.n >= 32 {
		w.word(uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

// word appends a full word.
func (w *bitWriter) word(v uint32) {
	if w.bytes {
		w.b = binary.LittleEndian.AppendUint32(w.b, v)
		return
	}
	w.w = append(w.w, v)
}

// unary appends q one bits and a zero.
func (w *bitWriter) unary(q uint32) {
	for q >= 32 {
		w.put(1<<32-1, 32)
		q -= 32
	}
	w.put(1<<q-1, uint(q)+1)
}

// done pads the last word with zeros and returns the words (none if bytes
// is set: they are in b).
func (w *bitWriter) done() []uint32 {
	if w.n > 0 {
		w.word(uint32(w.acc))
		w.acc, w.n = 0, 0
	}
	return w.w
}

// bitReader reads what bitWriter wrote.
type bitReader struct {
	w   []uint32
	acc uint64
	n   uint
}

func (r *bitReader) fill() {
	if r.n <= 32 && len(r.w) > 0 {
		r.acc |= uint64(r.w[0]) << r.n
		r.w = r.w[1:]
		r.n += 32
	}
}

// get reads k <= 32 bits; ok is false if the stream ends first.
func (r *bitReader) get(k uint) (uint32, bool) {
	if r.n < k {
		r.fill()
		if r.n < k {
			return 0, false
		}
	}
	v := uint32(r.acc & (1<<k - 1))
	r.acc >>= k
	r.n -= k
	return v, true
}

// unary reads a run of one bits and its terminating zero; ok is false if the
// stream ends first or the run exceeds limit.
func (r *bitReader) unary(limit uint32) (uint32, bool) {
	var q uint32
	for {
		r.fill()
		if r.n == 0 {
			return 0, false
		}
		if t := uint(bits.TrailingZeros64(^r.acc)); t < r.n {
			q += uint32(t)
			r.acc >>= t + 1
			r.n -= t + 1
			return q, q <= limit
		}
		q += uint32(r.n)
		r.acc, r.n = 0, 0
		if q > limit {
			return 0, false
		}
	}
}
