package sketch

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// Binary encodings share one header:
//
//	offset 0: magic "SKWR" (4 bytes)
//	offset 4: kind    (1 byte, one of the kind* constants)
//	offset 5: version (1 byte, per kind; decoders reject versions they do not know)
//
// followed by the kind's body, little-endian. Decoders validate every length
// against the bytes actually present and against per-kind limits before they
// allocate, so a crafted input cannot make them allocate more than a small
// multiple of its own size; on any error the receiver is left unchanged.

const magic = "SKWR"

// headerLen is the size of the common header.
const headerLen = len(magic) + 2

// kind identifies the sketch family in an encoding.
type kind uint8

const (
	kindCountMin      kind = 1
	kindHyperLogLog   kind = 2
	kindLossyCounting kind = 3
	kindSpaceSaving   kind = 4
	kindDDSketch      kind = 5
	kindKLL           kind = 6
	kindUltraLogLog   kind = 7
	kindMisraGries    kind = 8
)

func (k kind) String() string {
	switch k {
	case kindCountMin:
		return "CountMin"
	case kindHyperLogLog:
		return "HyperLogLog"
	case kindLossyCounting:
		return "LossyCounting"
	case kindSpaceSaving:
		return "SpaceSaving"
	case kindKLL:
		return "KLL"
	case kindDDSketch:
		return "DDSketch"
	case kindUltraLogLog:
		return "UltraLogLog"
	case kindMisraGries:
		return "MisraGries"
	}
	return "unknown"
}

// appendHeader appends the common header to dst.
func appendHeader(dst []byte, k kind, version uint8) []byte {
	dst = append(dst, magic...)
	return append(dst, byte(k), version)
}

// readHeader checks the common header of b for kind k and a version in
// [1, maxVersion], and returns the version and a decoder over the body.
func readHeader(b []byte, k kind, maxVersion uint8) (uint8, *decoder, error) {
	if len(b) < headerLen {
		return 0, nil, corrupt("%d bytes is shorter than the %d-byte header", len(b), headerLen)
	}
	if string(b[:len(magic)]) != magic {
		return 0, nil, corrupt("bad magic %q", b[:len(magic)])
	}
	if got := kind(b[len(magic)]); got != k {
		return 0, nil, corrupt("encoding holds a %v (kind %d), not a %v", got, uint8(got), k)
	}
	v := b[len(magic)+1]
	if v == 0 || v > maxVersion {
		return 0, nil, wrapVersion(k, v, maxVersion)
	}
	return v, &decoder{b: b[headerLen:]}, nil
}

func wrapVersion(k kind, v, maxVersion uint8) error {
	return fmt.Errorf("%w: %v version %d, this build reads 1..%d", ErrVersion, k, v, maxVersion)
}

// Little-endian appenders used by every encoder.

func appendU8(dst []byte, v uint8) []byte   { return append(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }
func appendF64(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}
func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// appendString appends a uvarint length and the bytes of s.
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// decoder reads a body. The first failure sticks: later reads return zero
// values and err reports the first problem, so decoders can read a whole
// record and check once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt(format, args...)
	}
}

// need reports whether n more bytes are present, failing otherwise.
func (d *decoder) need(n int, what string) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b) < n {
		d.fail("truncated reading %s: need %d bytes, have %d", what, n, len(d.b))
		return false
	}
	return true
}

func (d *decoder) u8(what string) uint8 {
	if !d.need(1, what) {
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) u32(what string) uint32 {
	if !d.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) u64(what string) uint64 {
	if !d.need(8, what) {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) f64(what string) float64 { return math.Float64frombits(d.u64(what)) }

// uvarint reads a uvarint in its shortest form: encoders write nothing
// else (binary.AppendUvarint), so an overlong one is corruption, and every
// decoder stays canonical (a decoded sketch re-encodes to the same bytes).
func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint for %s", what)
		return 0
	}
	if n != (bits.Len64(v|1)+6)/7 {
		d.fail("%s: uvarint %d not in its shortest form", what, v)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next n bytes without copying them.
func (d *decoder) bytes(n int, what string) []byte {
	if !d.need(n, what) {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// string reads a uvarint length, at most maxLen, and that many bytes.
func (d *decoder) string(maxLen int, what string) string {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return ""
	}
	if n > uint64(maxLen) {
		d.fail("%s length %d exceeds the limit %d", what, n, maxLen)
		return ""
	}
	return string(d.bytes(int(n), what))
}

// count reads a uvarint element count and checks it against max and against
// the bytes left, given that each element takes at least minSize bytes. It
// is how decoders size allocations safely.
func (d *decoder) count(max uint64, minSize int, what string) int {
	n := d.uvarint(what)
	if d.err != nil {
		return 0
	}
	if n > max {
		d.fail("%s %d exceeds the limit %d", what, n, max)
		return 0
	}
	if minSize > 0 && n > uint64(len(d.b)/minSize) {
		d.fail("%s %d needs at least %d bytes, have %d", what, n, n*uint64(minSize), len(d.b))
		return 0
	}
	return int(n)
}

// finish fails if bytes remain after the body and returns the first error.
func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}
