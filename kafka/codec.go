package kafka

import (
	"encoding/binary"
	"math"

	"github.com/skewerhq/skewer/stream"
)

// Codec encodes the values that cross Kafka: a stage's inputs, its partial
// accumulators and its results. Append appends the encoding of v to dst and
// returns the extended slice; Decode reads a value from exactly src and
// fails with an error wrapping ErrCorrupt on anything else. Decode must not
// keep src. The same operators.Aggregate runs locally and on Kafka; only
// the codecs are added.
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(src []byte) (T, error)
}

// Uint64Codec encodes a uint64 in 8 big-endian bytes: the accumulator and
// result of operators.Count.
type Uint64Codec struct{}

// Append implements Codec.
func (Uint64Codec) Append(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// Decode implements Codec.
func (Uint64Codec) Decode(src []byte) (uint64, error) {
	if len(src) != 8 {
		return 0, corrupt("uint64: %d bytes, want 8", len(src))
	}
	return binary.BigEndian.Uint64(src), nil
}

// Int64Codec encodes an int64 in 8 big-endian bytes: the accumulator and
// result of operators.Sum.
type Int64Codec struct{}

// Append implements Codec.
func (Int64Codec) Append(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// Decode implements Codec.
func (Int64Codec) Decode(src []byte) (int64, error) {
	v, err := Uint64Codec{}.Decode(src)
	return int64(v), err
}

// Float64Codec encodes a float64 by its IEEE 754 bits, big-endian.
type Float64Codec struct{}

// Append implements Codec.
func (Float64Codec) Append(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
}

// Decode implements Codec.
func (Float64Codec) Decode(src []byte) (float64, error) {
	v, err := Uint64Codec{}.Decode(src)
	return math.Float64frombits(v), err
}

// RecordCodec encodes a stream.Record (key, then time, 16 bytes), so that
// aggregates written for the local runtime's sources run unchanged.
type RecordCodec struct{}

// Append implements Codec.
func (RecordCodec) Append(dst []byte, r stream.Record) []byte {
	dst = binary.BigEndian.AppendUint64(dst, r.Key)
	return binary.BigEndian.AppendUint64(dst, uint64(r.Time))
}

// Decode implements Codec.
func (RecordCodec) Decode(src []byte) (stream.Record, error) {
	if len(src) != 16 {
		return stream.Record{}, corrupt("record: %d bytes, want 16", len(src))
	}
	return stream.Record{Key: binary.BigEndian.Uint64(src), Time: int64(binary.BigEndian.Uint64(src[8:]))}, nil
}
