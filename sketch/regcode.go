package sketch

import "slices"

// The register code: how HyperLogLog's dense encoding (version 4) and
// UltraLogLog's (version 3) write their 2^p one-byte registers. Once a
// sketch has filled, its registers take few distinct values, and those
// unevenly (a HyperLogLog's ranks cluster around log2(n/m), and an
// UltraLogLog's bytes likewise; their measured entropies are in
// docs/results/sketches.md, "Compact encodings"), so a Huffman code
// built from the registers' own histogram writes them in close to their
// entropy, with no model of the sketch:
//
//	values uvarint  the number v of distinct register values, 1..256
//	v times:  gap   uvarint  the value (the first) or its distance to the
//	                         previous one less 1 (values increasing, at most 255)
//	          count uvarint  registers holding it, at least 1; the last
//	                         value's count is not written: 2^p less the others'
//	code: each register's codeword in order, most significant bit first,
//	      packed from each byte's high bit; the last byte zero-padded
//
// The code is the canonical Huffman code (deflate's assignment: shorter
// codewords first, then increasing values) of the lengths huffLengths
// derives from the counts, with ties broken by value, so both sides
// compute it from the histogram alone and the encoding is canonical: the
// decoder checks that the registers it decodes have exactly the histogram
// declared, that the code fills exactly the bytes it needs, and that the
// padding is zero. A lone value gets a one-bit codeword, so the code takes
// at least one bit a register and a decoder allocates at most 8 bytes of
// registers per input byte.

// regCode is the histogram of a register array and its Huffman code.
type regCode struct {
	v    int         // distinct values
	val  [256]uint8  // the values, increasing
	cnt  [256]uint64 // registers holding val[i]
	bits [256]uint8  // codeword length of val[i]
	word [256]uint64 // codeword of val[i]
}

// fill sets c to the histogram and code of regs (non-empty).
func (c *regCode) fill(regs []uint8) {
	var hist [256]uint64
	for _, r := range regs {
		hist[r]++
	}
	c.v = 0
	for r, n := range hist {
		if n > 0 {
			c.val[c.v], c.cnt[c.v] = uint8(r), n
			c.v++
		}
	}
	c.build()
}

// build derives the codeword lengths and codewords from the counts.
func (c *regCode) build() {
	huffLengths(c.cnt[:c.v], c.bits[:c.v])
	var perLen [65]uint64
	for _, l := range c.bits[:c.v] {
		perLen[l]++
	}
	var next [65]uint64
	code := uint64(0)
	for l := 1; l < len(next); l++ {
		code = (code + perLen[l-1]) << 1
		next[l] = code
	}
	for i := range c.v {
		c.word[i] = next[c.bits[i]]
		next[c.bits[i]]++
	}
}

// size is the number of bits of the code's body.
func (c *regCode) size() uint64 {
	var t uint64
	for i := range c.v {
		t += c.cnt[i] * uint64(c.bits[i])
	}
	return t
}

// appendRegisters appends the register code of regs (2^p of them) to dst.
func appendRegisters(dst []byte, regs []uint8) []byte {
	var c regCode
	c.fill(regs)
	dst = appendUvarint(dst, uint64(c.v))
	for i := range c.v {
		gap := uint64(c.val[i])
		if i > 0 {
			gap -= uint64(c.val[i-1]) + 1
		}
		dst = appendUvarint(dst, gap)
		if i < c.v-1 {
			dst = appendUvarint(dst, c.cnt[i])
		}
	}
	var word [256]uint64
	var bits [256]uint8
	for i := range c.v {
		word[c.val[i]], bits[c.val[i]] = c.word[i], c.bits[i]
	}
	n := int((c.size() + 7) / 8)
	out := len(dst)
	dst = slices.Grow(dst, n)[:out+n]
	body := dst[out:] // every byte written below
	var acc uint64    // the low k bits are pending, acc's higher bits are stale
	k, j := uint(0), 0
	for _, r := range regs {
		acc = acc<<bits[r] | word[r]
		k += uint(bits[r])
		for k >= 8 {
			k -= 8
			body[j] = byte(acc >> k)
			j++
		}
	}
	if k > 0 {
		body[j] = byte(acc << (8 - k))
	}
	return dst
}

// readRegisters reads a register code of m registers from d, each value
// accepted by valid, and returns the registers: the one allocation, made
// once the histogram and the body's length are checked.
func readRegisters(d *decoder, m uint64, valid func(uint8) bool) ([]uint8, error) {
	var c regCode
	v := d.uvarint("register values")
	if d.err == nil && (v == 0 || v > 256) {
		return nil, corrupt("%d register values, want 1..256", v)
	}
	sum := uint64(0)
	for i := 0; i < int(v) && d.err == nil; i++ {
		val := min(d.uvarint("register value"), 256) // no overflow below
		if i > 0 {
			val += uint64(c.val[i-1]) + 1
		}
		n := m - sum // the last count is implied
		if i < int(v)-1 {
			n = uint64(d.count(m-sum, 0, "register count"))
		}
		switch {
		case d.err != nil:
		case val > 255:
			return nil, corrupt("register value %d above 255", val)
		case !valid(uint8(val)):
			return nil, corrupt("register value %d cannot arise", val)
		case n == 0:
			return nil, corrupt("register value %d held by no register", val)
		}
		c.val[i], c.cnt[i] = uint8(val), n
		sum += n
	}
	if d.err != nil {
		return nil, d.err
	}
	c.v = int(v)
	c.build()
	body := d.bytes(int((c.size()+7)/8), "register code")
	if d.err != nil {
		return nil, d.err
	}
	regs := make([]uint8, m)
	if err := c.decode(body, regs); err != nil {
		return nil, err
	}
	return regs, nil
}

// decode decodes len(regs) codewords from body into regs, checking that
// they have c's histogram and that the padding is zero.
func (c *regCode) decode(body []byte, regs []uint8) error {
	// Canonical decoding: the codewords of length l are the integers
	// first[l]..first[l]+perLen[l]-1, for the values sorted by (length,
	// value) from offset off[l].
	var perLen, first, off [65]uint64
	var sorted [256]uint8
	maxLen := 0
	for i := range c.v {
		perLen[c.bits[i]]++
		maxLen = max(maxLen, int(c.bits[i]))
	}
	for l := 1; l <= maxLen; l++ {
		off[l] = off[l-1] + perLen[l-1]
	}
	var at [65]uint64
	for i := range c.v {
		l := c.bits[i]
		if at[l] == 0 {
			first[l] = c.word[i]
		}
		sorted[off[l]+at[l]] = c.val[i]
		at[l]++
	}
	// fast maps the next 8 bits to length<<8 | value where they begin
	// with a codeword of at most 8 bits, and to 0 where it is longer.
	var fast [256]uint16
	for i := range c.v {
		if l := c.bits[i]; l <= 8 {
			lo := c.word[i] << (8 - l)
			for s := range uint64(1) << (8 - l) {
				fast[lo|s] = uint16(l)<<8 | uint16(c.val[i])
			}
		}
	}
	// buf holds the next nb bits of body from its top bit; j bytes are read.
	var seen [256]uint64
	var buf uint64
	nb, j := uint(0), 0
	for i := range regs {
		for nb <= 56 && j < len(body) {
			buf |= uint64(body[j]) << (56 - nb)
			j++
			nb += 8
		}
		if e := fast[buf>>56]; e != 0 && uint(e>>8) <= nb {
			buf <<= e >> 8
			nb -= uint(e >> 8)
			regs[i] = uint8(e)
			seen[uint8(e)]++
			continue
		}
		code := uint64(0)
		for l := 1; ; l++ {
			if l > maxLen || nb == 0 {
				return corrupt("register %d: no codeword", i)
			}
			code = code<<1 | buf>>63
			buf <<= 1
			nb--
			if k := code - first[l]; k < perLen[l] {
				regs[i] = sorted[off[l]+k]
				seen[regs[i]]++
				break
			}
			if nb == 0 && j < len(body) {
				buf, nb = uint64(body[j])<<56, 8
				j++
			}
		}
	}
	for i := range c.v {
		if seen[c.val[i]] != c.cnt[i] {
			return corrupt("register value %d held by %d registers, the histogram says %d", c.val[i], seen[c.val[i]], c.cnt[i])
		}
	}
	if pos := 8*uint64(j) - uint64(nb); pos != c.size() {
		return corrupt("register code of %d bits in %d", pos, c.size())
	}
	if buf != 0 {
		return corrupt("register code padding is not zero")
	}
	return nil
}

// huffLengths sets bits[i] to the length of symbol i's codeword in a
// Huffman code for the counts w (all positive; at most 256): the two-queue
// construction, taking the leaf on equal weights and leaves in order of
// (weight, index), so it is deterministic. A lone symbol gets length 1.
// The lengths stay below 64: a codeword of length l needs a total weight
// of at least Fibonacci(l+2), far above 2^26 registers for l = 64.
func huffLengths(w []uint64, bits []uint8) {
	n := len(w)
	if n == 1 {
		bits[0] = 1
		return
	}
	var leaf [256]uint16 // leaf indexes by (weight, index): insertion sort
	for i := range n {
		j := i
		for ; j > 0 && w[leaf[j-1]] > w[i]; j-- {
			leaf[j] = leaf[j-1]
		}
		leaf[j] = uint16(i)
	}
	// Nodes 0..n-1 are the leaves, n.. the internal nodes in order of
	// creation (and of weight).
	var weight [511]uint64
	var parent [511]uint16
	copy(weight[:], w)
	li, ii, next := 0, n, n
	pick := func() int {
		if li < n && (ii >= next || weight[leaf[li]] <= weight[ii]) {
			li++
			return int(leaf[li-1])
		}
		ii++
		return ii - 1
	}
	for next < 2*n-1 {
		a, b := pick(), pick()
		weight[next] = weight[a] + weight[b]
		parent[a], parent[b] = uint16(next), uint16(next)
		next++
	}
	var depth [511]uint8
	for x := 2*n - 3; x >= 0; x-- { // the root, 2n-2, has depth 0
		depth[x] = depth[parent[x]] + 1
	}
	copy(bits, depth[:n])
}
