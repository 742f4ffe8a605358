package sketch

import "slices"

// UltraLogLog encoding, version 3, after the common header (kind 7):
//
//	precision  u8   (4..26)
//	registers       the 2^precision registers in hash4j's layout, each one
//	                that the precision can produce (ullValidRegister), in
//	                the register code (regcode.go): their histogram and a
//	                Huffman code built from it
//	martingale u8   (0 none, 1 valid: MartingaleValid)
//	estimate   f64  the martingale estimate, finite and not negative; only
//	                with a valid martingale (the probability that the
//	                registers change is recomputed from them)
//
// The encoding is canonical (a merged sketch has no martingale, so merges
// of the same sketches in any order encode to equal bytes). The code takes
// at least one bit a register, so a decoder allocates at most 8 bytes of
// registers per input byte. Version 2 (still decoded) is version 3 with
// the registers written as they are in memory, one byte each; version 1
// (still decoded, with no martingale) is version 2 without the martingale
// byte and estimate. There is no sparse form: a sketch is 2^precision
// bytes in memory from its first add, and a decoder that expanded a short
// sparse body to them would allocate far more than its input (2^26 bytes
// for a few at precision 26).
const ullVersion = 3

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
// A zero UltraLogLog has no encoding: it returns dst unchanged and an error
// wrapping ErrInvalidParameter.
func (s *UltraLogLog) AppendBinary(dst []byte) ([]byte, error) {
	if s.p == 0 {
		return dst, errZeroULL("receiver")
	}
	dst = appendHeader(dst, kindUltraLogLog, ullVersion)
	dst = appendU8(dst, s.p)
	dst = appendRegisters(dst, s.regs)
	if !s.hip.valid {
		return appendU8(dst, 0), nil
	}
	return appendF64(appendU8(dst, 1), s.hip.est), nil
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler):
// the register code, at least 2^precision/8 bytes and at most 2^precision
// plus the histogram (a Huffman code is never longer than a fixed 8-bit
// one; sizes in docs/results/sketches.md, "Compact encodings"), 8 more bytes with
// a valid martingale.
func (s *UltraLogLog) MarshalBinary() ([]byte, error) {
	if s.p == 0 {
		return nil, errZeroULL("receiver")
	}
	return s.AppendBinary(make([]byte, 0, headerLen+10+len(s.regs)*5/8))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every
// field; it fails with an error wrapping ErrCorrupt or ErrVersion and leaves
// s unchanged if b is not a valid encoding. A zero UltraLogLog may be the
// receiver. It reads versions 1 to 3; a version 1 image decodes with no
// martingale (MartingaleValid false).
func (s *UltraLogLog) UnmarshalBinary(b []byte) error {
	v, d, err := readHeader(b, kindUltraLogLog, ullVersion)
	if err != nil {
		return err
	}
	p := d.u8("precision")
	if d.err != nil {
		return d.err
	}
	if p < UltraLogLogMinPrecision || p > UltraLogLogMaxPrecision {
		return corrupt("precision %d outside 4..26", p)
	}
	regs, err := ullReadRegisters(d, v, p)
	if err != nil {
		return err
	}
	var hip martingale
	if v >= 2 {
		switch mg := d.u8("martingale"); {
		case d.err != nil:
			return d.err
		case mg > 1:
			return corrupt("martingale byte %d, want 0 or 1", mg)
		case mg == 1:
			hip.est, hip.valid = d.f64("martingale estimate"), true
			if d.err == nil && !validMartingaleEstimate(hip.est) {
				return corrupt("martingale estimate %v is not a finite non-negative number", hip.est)
			}
		}
	}
	if err := d.finish(); err != nil {
		return err
	}
	if v < 3 {
		if i, ok := ullCheckRegisters(regs, p); !ok {
			return corrupt("register %d = %d cannot arise at precision %d", i, regs[i], p)
		}
		regs = slices.Clone(regs)
	}
	next := newULL(p, regs)
	if hip.valid {
		hip.q = ullChangeSum(next.regs, p)
		next.hip = hip
	}
	*s = *next
	return nil
}

// ullReadRegisters reads the registers of a version v body at precision p:
// the register code from version 3 (its values checked), the raw bytes
// before (checked, and to be copied, by the caller).
func ullReadRegisters(d *decoder, v, p uint8) ([]uint8, error) {
	if v < 3 {
		raw := d.bytes(1<<p, "registers")
		return raw, d.err
	}
	return readRegisters(d, 1<<p, func(r uint8) bool { return ullValidRegister(r, p) })
}
