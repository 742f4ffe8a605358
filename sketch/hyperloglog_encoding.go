package sketch

import "slices"

// HyperLogLog encoding, version 1, after the common header:
//
//	precision u8   (4..18)
//	form      u8   (0 sparse, 1 dense)
//	sparse: count uvarint (at most the sparse limit of the precision), then
//	        count uvarint gaps between the sorted tokens (the first from 0);
//	        token = index<<6 | rank at precision 26, indexes strictly
//	        increasing, ranks in 1..39
//	dense:  2^precision bytes, one register each, ranks in 0..65-precision
//
// The encoding is canonical: equal sketches encode to equal bytes.
const hllVersion = 1

const (
	hllFormSparse = 0
	hllFormDense  = 1
)

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
func (s *HyperLogLog) AppendBinary(dst []byte) ([]byte, error) {
	dst = appendHeader(dst, kindHyperLogLog, hllVersion)
	dst = appendU8(dst, s.p)
	if s.regs != nil {
		dst = appendU8(dst, hllFormDense)
		return append(dst, s.regs...), nil
	}
	dst = appendU8(dst, hllFormSparse)
	toks := make([]uint32, 0, s.sparse.n)
	for _, t := range s.sparse.slots {
		if t != 0 {
			toks = append(toks, t)
		}
	}
	slices.Sort(toks)
	dst = appendUvarint(dst, uint64(len(toks)))
	prev := uint32(0)
	for _, t := range toks {
		dst = appendUvarint(dst, uint64(t-prev))
		prev = t
	}
	return dst, nil
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler).
func (s *HyperLogLog) MarshalBinary() ([]byte, error) {
	n := headerLen + 2 + 1<<s.p
	if s.regs == nil {
		n = headerLen + 2 + 5 + 3*s.sparse.n
	}
	return s.AppendBinary(make([]byte, 0, n))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every field;
// it fails with an error wrapping ErrCorrupt or ErrVersion and leaves s
// unchanged if b is not a valid encoding. A zero HyperLogLog may be the
// receiver.
func (s *HyperLogLog) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindHyperLogLog, hllVersion)
	if err != nil {
		return err
	}
	p := d.u8("precision")
	form := d.u8("form")
	if d.err != nil {
		return d.err
	}
	if p < HyperLogLogMinPrecision || p > HyperLogLogMaxPrecision {
		return corrupt("precision %d outside 4..18", p)
	}
	next := HyperLogLog{p: p, pad: 1 << (p - 1)}
	switch form {
	case hllFormDense:
		raw := d.bytes(1<<p, "registers")
		if err := d.finish(); err != nil {
			return err
		}
		maxRank := 65 - p
		for i, r := range raw {
			if r > maxRank {
				return corrupt("register %d holds rank %d, above %d", i, r, maxRank)
			}
		}
		next.regs = append([]uint8(nil), raw...)
	case hllFormSparse:
		n := d.count(uint64(sparseLimit(p)), 1, "sparse tokens")
		if d.err != nil {
			return d.err
		}
		next.sparse.init(n)
		prev := uint64(0)
		for i := range n {
			t := prev + d.uvarint("token gap")
			if d.err != nil {
				return d.err
			}
			if t > 1<<32-1 {
				return corrupt("token %d overflows 32 bits", i)
			}
			if i > 0 && t>>tokenRankBits <= prev>>tokenRankBits {
				return corrupt("token %d: index %d not above the previous %d", i, t>>tokenRankBits, prev>>tokenRankBits)
			}
			if r := t & tokenRankMask; r == 0 || r > sparseMaxRank {
				return corrupt("token %d holds rank %d, want 1..%d", i, r, sparseMaxRank)
			}
			next.sparse.insert(uint32(t))
			prev = t
		}
		if err := d.finish(); err != nil {
			return err
		}
	default:
		return corrupt("unknown form %d", form)
	}
	*s = next
	return nil
}
