package sketch

import "slices"

// UltraLogLog encoding, version 1, after the common header (kind 7):
//
//	precision u8   (4..26)
//	registers      2^precision bytes in hash4j's layout, each one that the
//	               precision can produce (ullValidRegister)
//
// The body is the in-memory state, so the encoding is canonical and a
// decoder allocates exactly the register bytes the input holds. There is no
// sparse form: a sketch is 2^precision bytes in memory from its first add,
// and a decoder that expanded a short sparse body to them would allocate
// far more than its input (2^26 bytes for a few at precision 26).
const ullVersion = 1

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
// A zero UltraLogLog has no encoding: it returns dst unchanged and an error
// wrapping ErrInvalidParameter.
func (s *UltraLogLog) AppendBinary(dst []byte) ([]byte, error) {
	if s.p == 0 {
		return dst, errZeroULL("receiver")
	}
	dst = appendHeader(dst, kindUltraLogLog, ullVersion)
	dst = appendU8(dst, s.p)
	return append(dst, s.regs...), nil
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler):
// 2^precision + 7 bytes.
func (s *UltraLogLog) MarshalBinary() ([]byte, error) {
	if s.p == 0 {
		return nil, errZeroULL("receiver")
	}
	return s.AppendBinary(make([]byte, 0, headerLen+1+len(s.regs)))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every
// field; it fails with an error wrapping ErrCorrupt or ErrVersion and leaves
// s unchanged if b is not a valid encoding. A zero UltraLogLog may be the
// receiver.
func (s *UltraLogLog) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindUltraLogLog, ullVersion)
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
	raw := d.bytes(1<<p, "registers")
	if err := d.finish(); err != nil {
		return err
	}
	if i, ok := ullCheckRegisters(raw, p); !ok {
		return corrupt("register %d = %d cannot arise at precision %d", i, raw[i], p)
	}
	*s = *newULL(p, slices.Clone(raw))
	return nil
}
