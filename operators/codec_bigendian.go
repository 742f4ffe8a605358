package operators

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The big-endian codecs write fixed-width integers and floats as Kafka's
// Java serialisers do (LongSerializer, DoubleSerializer), so that topics
// written or read by programs in other languages hold what those expect.
// Uint64Codec, Int64Codec (varints) and Float64Codec (little-endian) are
// the choice for state that only skewer reads.

// BigEndianUint64Codec encodes a uint64 in 8 big-endian bytes.
type BigEndianUint64Codec struct{}

// Append implements Codec.
func (BigEndianUint64Codec) Append(dst []byte, v uint64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, v), nil
}

// Decode implements Codec.
func (BigEndianUint64Codec) Decode(src []byte) (uint64, error) {
	if len(src) != 8 {
		return 0, fmt.Errorf("%w: big-endian uint64: %d bytes, want 8", ErrCorrupt, len(src))
	}
	return binary.BigEndian.Uint64(src), nil
}

// BigEndianInt64Codec encodes an int64 in 8 big-endian bytes, two's
// complement: Kafka's LongSerializer.
type BigEndianInt64Codec struct{}

// Append implements Codec.
func (BigEndianInt64Codec) Append(dst []byte, v int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
}

// Decode implements Codec.
func (BigEndianInt64Codec) Decode(src []byte) (int64, error) {
	v, err := BigEndianUint64Codec{}.Decode(src)
	return int64(v), err
}

// BigEndianFloat64Codec encodes a float64 by its IEEE 754 bits, 8 bytes
// big-endian, so every value (NaN payloads, -0) round-trips: Kafka's
// DoubleSerializer.
type BigEndianFloat64Codec struct{}

// Append implements Codec.
func (BigEndianFloat64Codec) Append(dst []byte, v float64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v)), nil
}

// Decode implements Codec.
func (BigEndianFloat64Codec) Decode(src []byte) (float64, error) {
	v, err := BigEndianUint64Codec{}.Decode(src)
	return math.Float64frombits(v), err
}
