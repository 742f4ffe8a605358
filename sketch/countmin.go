package sketch

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Count-Min limits. A sketch holds at most maxCountMinCells counters (1 GiB
// of uint64), in at most maxCountMinDepth rows of at most maxCountMinWidth
// counters; constructors and decoders reject anything larger.
const (
	maxCountMinWidth = 1 << 31
	maxCountMinDepth = 64
	maxCountMinCells = 1 << 27
)

// cmRowMul is the odd multiplier of the per-row finaliser (the 64-bit golden
// ratio constant, as in Fibonacci hashing).
const cmRowMul = 0x9e3779b97f4a7c15

// CountMin is a Count-Min sketch (Cormode & Muthukrishnan, 2005): depth rows
// of width saturating uint64 counters. EstimateHash never undercounts, and
// with width = ⌈e/ε⌉ and depth = ⌈ln 1/δ⌉ it overcounts by more than εN
// (N = Total) with probability at most δ for any one key.
//
// Row i of a key with hash h uses the Kirsch–Mitzenmacher value
// g_i = h + i·h2 (h2 = h rotated by 32 bits, made odd) passed through a
// finaliser (xor-shift, multiply by an odd constant, keep the top bits).
// The finaliser matters: with a linear index such as (h1 + i·h2) mod w, two
// keys that agree in h1 and h2 mod w collide in every row, so a pair
// collides everywhere with probability 1/w² whatever the depth; with
// ristretto's (h ^ seed[i]) mod w a collision in one row is a collision in
// all. The non-linear step makes rows behave as independent (tested).
//
// The conservative variant (Estan & Varghese) raises only the counters that
// hold the current minimum, which never makes an estimate worse and usually
// makes it much better; its Merge is an upper bound (see Merge).
//
// The zero CountMin is not usable: build one with a constructor or decode
// one with UnmarshalBinary. On a zero CountMin, Width, Depth, Total and
// Conservative report zero values, Merge, AppendBinary and MarshalBinary
// return an error wrapping ErrInvalidParameter, and every other method
// panics with a message naming the constructors. A CountMin is not safe for
// concurrent use.
type CountMin struct {
	counts       []uint64 // depth rows of width counters, row-major
	width        int
	depth        int
	shift        uint8 // 64 - log2(width): row index = top bits
	conservative bool
	// plain is set on built sketches without conservative update: the
	// unchecked fast path of AddHash and AddHashes applies. A zero CountMin
	// has it false, so it takes addSlow, which reports the misuse at no
	// cost to the fast path.
	plain bool
	total uint64
}

// countMinBuilders names what builds a usable CountMin.
const countMinBuilders = "NewCountMin, NewCountMinSize (or their conservative forms) or UnmarshalBinary"

// checkBuilt panics if c is a zero CountMin.
func (c *CountMin) checkBuilt() {
	if c.width == 0 {
		panicZero("CountMin", countMinBuilders)
	}
}

// NewCountMin returns a Count-Min sketch whose estimates exceed the true
// count by more than epsilon·Total with probability at most delta. Its width
// is ⌈e/epsilon⌉ rounded up to a power of two and its depth ⌈ln(1/delta)⌉;
// both parameters must lie in (0, 1).
func NewCountMin(epsilon, delta float64) (*CountMin, error) {
	return newCountMinEps(epsilon, delta, false)
}

// NewConservativeCountMin is NewCountMin with conservative update.
func NewConservativeCountMin(epsilon, delta float64) (*CountMin, error) {
	return newCountMinEps(epsilon, delta, true)
}

// NewCountMinSize returns a Count-Min sketch of depth rows of width counters.
// Width must be a power of two in [2, 2^31], depth in [1, 64], and
// width·depth at most 2^27 counters (1 GiB). Its guarantee is that of
// epsilon = e/width and delta = e^-depth.
func NewCountMinSize(width, depth int) (*CountMin, error) {
	return newCountMinSize(width, depth, false)
}

// NewConservativeCountMinSize is NewCountMinSize with conservative update.
func NewConservativeCountMinSize(width, depth int) (*CountMin, error) {
	return newCountMinSize(width, depth, true)
}

func newCountMinEps(epsilon, delta float64, conservative bool) (*CountMin, error) {
	if !(epsilon > 0 && epsilon < 1) { // also rejects NaN
		return nil, invalidParam("epsilon", epsilon, "a value in (0, 1)")
	}
	if !(delta > 0 && delta < 1) {
		return nil, invalidParam("delta", delta, "a value in (0, 1)")
	}
	w := math.Ceil(math.E / epsilon)
	if w > maxCountMinWidth {
		return nil, invalidParam("epsilon", epsilon, "at least e/2^31 (width limit)")
	}
	width := 1 << bits.Len64(uint64(w)-1)
	if width < 2 {
		width = 2
	}
	d := math.Ceil(math.Log(1 / delta))
	if d > maxCountMinDepth {
		return nil, invalidParam("delta", delta, "at least e^-64 (depth limit)")
	}
	depth := max(int(d), 1)
	if width*depth > maxCountMinCells {
		return nil, invalidParam("epsilon", epsilon,
			"a value whose width (here "+strconv.Itoa(width)+") times depth fits in 2^27 counters")
	}
	return newCountMinShape(width, depth, conservative), nil
}

func newCountMinSize(width, depth int, conservative bool) (*CountMin, error) {
	if width < 2 || width > maxCountMinWidth || width&(width-1) != 0 {
		return nil, invalidParam("width", width, "a power of two in [2, 2^31]")
	}
	if depth < 1 || depth > maxCountMinDepth {
		return nil, invalidParam("depth", depth, "a value in [1, 64]")
	}
	if width*depth > maxCountMinCells {
		return nil, invalidParam("width", width, "width·depth at most 2^27 counters, depth is "+strconv.Itoa(depth))
	}
	return newCountMinShape(width, depth, conservative), nil
}

// newCountMinShape builds a sketch of a validated shape.
func newCountMinShape(width, depth int, conservative bool) *CountMin {
	return &CountMin{
		counts:       make([]uint64, width*depth),
		width:        width,
		depth:        depth,
		shift:        uint8(64 - bits.TrailingZeros64(uint64(width))),
		conservative: conservative,
		plain:        !conservative,
	}
}

// Width returns the number of counters per row.
func (c *CountMin) Width() int { return c.width }

// Depth returns the number of rows.
func (c *CountMin) Depth() int { return c.depth }

// Conservative reports whether the sketch uses conservative update.
func (c *CountMin) Conservative() bool { return c.conservative }

// Total returns the sum of all counts added (saturating at 2^64-1).
func (c *CountMin) Total() uint64 { return c.total }

// Reset zeroes every counter and the total, keeping the shape and the
// update rule: afterwards the sketch is what its constructor returned, and
// no memory is allocated (a windowed hot-key detector resets one every
// window).
func (c *CountMin) Reset() {
	c.checkBuilt()
	clear(c.counts)
	c.total = 0
}

// cmRowStep returns the Kirsch–Mitzenmacher step h2 for hash h: h rotated by
// half its width, made odd so that the g_i differ for every row.
func cmRowStep(h uint64) uint64 { return bits.RotateLeft64(h, 32) | 1 }

// cmRowIndex maps the Kirsch–Mitzenmacher value g of one row to a column by a
// non-linear finaliser: an xor-shift, a multiplication by an odd constant,
// and the top log2(width) bits.
func cmRowIndex(g uint64, shift uint8) int {
	return int(((g ^ g>>29) * cmRowMul) >> (shift & 63))
}

// column returns the column of row row for the key whose hash is h: the
// same position AddHash and EstimateHash use.
func (c *CountMin) column(h uint64, row int) int {
	return cmRowIndex(h+uint64(row)*cmRowStep(h), c.shift)
}

// satAdd returns a+b, or 2^64-1 if that overflows.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// AddHash adds n to the count of the key whose hash is h. It does not
// allocate. Counters and the total saturate at 2^64-1 instead of wrapping.
//
// Every counter is at most Total (a row sums to Total, or to less under
// conservative update), so while Total+n does not overflow no counter can,
// and the plain update needs no per-counter saturation check.
func (c *CountMin) AddHash(h, n uint64) {
	t := c.total + n
	if t < n || !c.plain {
		c.addSlow(h, n)
		return
	}
	c.total = t
	counts, w, shift := c.counts, c.width, c.shift&63
	step := cmRowStep(h)
	off := 0
	for ; off+4*w <= len(counts); off += 4 * w {
		c0, c1, c2, c3 := cmColumns4(h, step, shift)
		h += 4 * step
		counts[off+c0] += n
		counts[off+w+c1] += n
		counts[off+2*w+c2] += n
		counts[off+3*w+c3] += n
	}
	for ; off < len(counts); off += w {
		counts[off+cmRowIndex(h, shift)] += n
		h += step
	}
}

// cmColumns4 returns the columns of four consecutive rows for
// Kirsch–Mitzenmacher value h (step apart). AddHash and AddHashes compute
// all four before touching any counter, so the four (possibly cache-missing)
// increments are issued together; in one loop per row each increment
// would wait behind the previous row's finaliser, which dominates once the
// sketch outgrows the cache (docs/results/sketches.md, "Count-Min speed").
func cmColumns4(h, step uint64, shift uint8) (c0, c1, c2, c3 int) {
	return cmRowIndex(h, shift), cmRowIndex(h+step, shift), cmRowIndex(h+2*step, shift), cmRowIndex(h+3*step, shift)
}

// AddHashes adds n to the count of every key whose hash is in hs (a repeated
// hash is counted each time): AddHash in a loop, with the sketch's fields
// held in registers across the hashes. It does not allocate. The loop body
// repeats AddHash's rather than sharing it: AddHash written as AddHashes of
// one hash is slower, and a shared per-hash function is over the inlining
// budget.
func (c *CountMin) AddHashes(hs []uint64, n uint64) {
	hi, add := bits.Mul64(uint64(len(hs)), n)
	t := c.total + add
	if hi != 0 || t < add || !c.plain {
		for _, h := range hs {
			c.addSlow(h, n)
		}
		return
	}
	c.total = t
	counts, w, shift := c.counts, c.width, c.shift&63
	for _, h := range hs {
		step := cmRowStep(h)
		off := 0
		for ; off+4*w <= len(counts); off += 4 * w {
			c0, c1, c2, c3 := cmColumns4(h, step, shift)
			h += 4 * step
			counts[off+c0] += n
			counts[off+w+c1] += n
			counts[off+2*w+c2] += n
			counts[off+3*w+c3] += n
		}
		for ; off < len(counts); off += w {
			counts[off+cmRowIndex(h, shift)] += n
			h += step
		}
	}
}

// addSlow is AddHash for conservative sketches, for updates that may
// saturate, and for the zero CountMin (which it reports).
func (c *CountMin) addSlow(h, n uint64) {
	c.checkBuilt()
	c.total = satAdd(c.total, n)
	w, shift, counts := c.width, c.shift, c.counts
	step := cmRowStep(h)
	target := uint64(0)
	if c.conservative {
		target = satAdd(c.EstimateHash(h), n)
	}
	g := h
	for off := 0; off < len(counts); off += w {
		row := counts[off : off+w : off+w]
		j := cmRowIndex(g, shift) & (w - 1)
		if c.conservative {
			row[j] = max(row[j], target)
		} else {
			row[j] = satAdd(row[j], n)
		}
		g += step
	}
}

// Add adds n to the count of key b (hashed with Hash).
func (c *CountMin) Add(b []byte, n uint64) { c.AddHash(Hash(b), n) }

// AddString adds n to the count of key s (hashed with HashString).
func (c *CountMin) AddString(s string, n uint64) { c.AddHash(HashString(s), n) }

// EstimateHash returns the estimated count of the key whose hash is h: the
// minimum of its counters, never below the true count.
func (c *CountMin) EstimateHash(h uint64) uint64 {
	w, shift, counts := c.width, c.shift, c.counts
	step := cmRowStep(h)
	g := h
	est := uint64(math.MaxUint64)
	for off := 0; off < len(counts); off += w {
		row := counts[off : off+w : off+w]
		est = min(est, row[cmRowIndex(g, shift)&(w-1)])
		g += step
	}
	if est == math.MaxUint64 { // saturated counters, or no rows: a zero CountMin
		c.checkBuilt()
	}
	return est
}

// Estimate returns the estimated count of key b.
func (c *CountMin) Estimate(b []byte) uint64 { return c.EstimateHash(Hash(b)) }

// EstimateString returns the estimated count of key s.
func (c *CountMin) EstimateString(s string) uint64 { return c.EstimateHash(HashString(s)) }

// Merge adds other's counters into c, so that c summarises both streams.
// Both sketches must have the same width, depth and variant, or Merge
// returns an error wrapping ErrIncompatible and leaves c unchanged (a zero
// CountMin on either side is an ErrInvalidParameter).
//
// For the plain variant the result is exactly the sketch of the
// concatenated streams, in either order. For conservative sketches the
// counter sums are an upper bound on the sketch of the concatenation:
// estimates stay at or above the true counts but may be larger than
// conservative update over the whole stream would have given (never larger
// than a plain sketch of the same shape and stream).
func (c *CountMin) Merge(other *CountMin) error {
	if other == nil {
		return invalidParam("other", "nil", "a *CountMin")
	}
	if c.width == 0 {
		return errZero("receiver", "CountMin", countMinBuilders)
	}
	if other.width == 0 {
		return errZero("other", "CountMin", countMinBuilders)
	}
	if other.width != c.width || other.depth != c.depth || other.conservative != c.conservative {
		return fmt.Errorf("%w: CountMin shapes differ: %dx%d conservative=%v vs %dx%d conservative=%v",
			ErrIncompatible, c.width, c.depth, c.conservative, other.width, other.depth, other.conservative)
	}
	for i, v := range other.counts[:len(c.counts)] {
		c.counts[i] = satAdd(c.counts[i], v)
	}
	c.total = satAdd(c.total, other.total)
	return nil
}

// countMinVersion is the encoding version written by AppendBinary.
const countMinVersion = 1

// Count-Min encoding, after the common header (version 1):
//
//	flags       u8: bit 0 = conservative; other bits zero
//	log2(width) u8: 1..31
//	depth       u8: 1..64
//	total       u64
//	counters    width·depth uvarints, row-major
//
// Decoding checks that every row sums to total (plain; unless total has
// saturated) or to at most total (conservative), which is what any sequence
// of AddHash and Merge calls leaves.

// AppendBinary appends the encoding of c to dst and returns the extended
// buffer. A zero CountMin has no encoding: it returns dst unchanged and an
// error wrapping ErrInvalidParameter.
func (c *CountMin) AppendBinary(dst []byte) ([]byte, error) {
	if c.width == 0 {
		return dst, errZero("receiver", "CountMin", countMinBuilders)
	}
	dst = appendHeader(dst, kindCountMin, countMinVersion)
	var flags uint8
	if c.conservative {
		flags |= 1
	}
	dst = appendU8(dst, flags)
	dst = appendU8(dst, uint8(bits.TrailingZeros64(uint64(c.width))))
	dst = appendU8(dst, uint8(c.depth))
	dst = appendU64(dst, c.total)
	for _, v := range c.counts {
		dst = appendUvarint(dst, v)
	}
	return dst, nil
}

// MarshalBinary returns the encoding of c (see AppendBinary).
func (c *CountMin) MarshalBinary() ([]byte, error) {
	if c.width == 0 {
		return nil, errZero("receiver", "CountMin", countMinBuilders)
	}
	return c.AppendBinary(make([]byte, 0, headerLen+11+len(c.counts)*2))
}

// UnmarshalBinary replaces c with the sketch encoded in b. It returns an
// error wrapping ErrCorrupt or ErrVersion for bytes AppendBinary cannot have
// written, allocates at most 8 bytes per input byte, and leaves c unchanged
// on error.
func (c *CountMin) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindCountMin, countMinVersion)
	if err != nil {
		return err
	}
	flags := d.u8("flags")
	logW := d.u8("log2(width)")
	depth := int(d.u8("depth"))
	total := d.u64("total")
	if d.err != nil {
		return d.err
	}
	if flags&^1 != 0 {
		return corrupt("CountMin flags %#x has unknown bits", flags)
	}
	if logW < 1 || logW > 31 {
		return corrupt("CountMin log2(width) %d outside [1, 31]", logW)
	}
	if depth < 1 || depth > maxCountMinDepth {
		return corrupt("CountMin depth %d outside [1, %d]", depth, maxCountMinDepth)
	}
	width := 1 << logW
	cells := width * depth
	if cells > maxCountMinCells {
		return corrupt("CountMin %dx%d exceeds %d counters", width, depth, maxCountMinCells)
	}
	if cells > len(d.b) { // every counter takes at least one byte
		return corrupt("CountMin %dx%d needs at least %d bytes of counters, have %d", width, depth, cells, len(d.b))
	}
	conservative := flags&1 != 0
	counts := make([]uint64, cells)
	for i := range counts {
		counts[i] = d.uvarint("counter")
	}
	if err := d.finish(); err != nil {
		return err
	}
	for r := 0; r < depth; r++ {
		var sum uint64
		for _, v := range counts[r*width : (r+1)*width] {
			sum = satAdd(sum, v)
		}
		switch {
		case sum > total:
			return corrupt("CountMin row %d sums to %d, above the total %d", r, sum, total)
		case !conservative && sum != total && total != math.MaxUint64:
			return corrupt("CountMin row %d sums to %d, not the total %d", r, sum, total)
		}
	}
	*c = CountMin{
		counts:       counts,
		width:        width,
		depth:        depth,
		shift:        uint8(64 - int(logW)),
		conservative: conservative,
		plain:        !conservative,
		total:        total,
	}
	return nil
}
