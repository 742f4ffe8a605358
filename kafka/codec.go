package kafka

import (
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/skewerhq/skewer/stream"
)

// Encoder appends the encoding of v to dst and returns the extended slice.
type Encoder[T any] interface {
	Append(dst []byte, v T) []byte
}

// Decoder reads a value from exactly src and fails with an error wrapping
// ErrCorrupt on anything else. Decode must not keep src (the client reuses
// it). A Source takes a Decoder for the values of the user's topic: the
// ready ones (BytesCodec, StringCodec, JSONCodec) or the user's own, for
// Avro, Protobuf or a schema registry's framing (a magic byte and a schema
// id before the payload), which this package never needs to know.
type Decoder[T any] interface {
	Decode(src []byte) (T, error)
}

// Codec encodes the values that cross Kafka: a stage's inputs, its partial
// accumulators and its results. The same operators.Aggregate runs locally
// and on Kafka; only the codecs are added.
type Codec[T any] interface {
	Encoder[T]
	Decoder[T]
}

// BytesCodec passes bytes through: Decode returns a copy of src.
type BytesCodec struct{}

// Append implements Codec.
func (BytesCodec) Append(dst []byte, v []byte) []byte { return append(dst, v...) }

// Decode implements Codec.
func (BytesCodec) Decode(src []byte) ([]byte, error) { return append([]byte(nil), src...), nil }

// StringCodec encodes a string as its bytes (UTF-8 is not checked).
type StringCodec struct{}

// Append implements Codec.
func (StringCodec) Append(dst []byte, v string) []byte { return append(dst, v...) }

// Decode implements Codec.
func (StringCodec) Decode(src []byte) (string, error) { return string(src), nil }

// JSONCodec encodes a T as JSON with encoding/json: a struct's exported
// fields by their json tags, as any JSON library writes and reads them.
// Decode fills a new T from one JSON value (fields the struct lacks are
// ignored, as services add fields) and fails with ErrCorrupt on anything
// that is not one JSON value of T's shape. Append encodes a value that
// json.Marshal refuses (a channel, a NaN) as JSON null. Both allocate, as
// encoding/json does.
type JSONCodec[T any] struct{}

// Append implements Codec.
func (JSONCodec[T]) Append(dst []byte, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, b...)
}

// Decode implements Codec.
func (JSONCodec[T]) Decode(src []byte) (T, error) {
	var v T
	if err := json.Unmarshal(src, &v); err != nil {
		var zero T
		return zero, corrupt("json: %v", err)
	}
	return v, nil
}

// KeyFunc appends the key bytes of a record of type T to dst and returns the
// extended slice: how a ProducerOf keys the records it writes and how a
// Source takes its aggregation key from a field of the value. Results carry
// these bytes back as their key; the 64-bit hash that routes and
// aggregates them is stream.HashBytes of them, equal to
// stream.StringKey(f)'s for StringKey(f).
type KeyFunc[T any] func(dst []byte, v T) []byte

// StringKey keys records by the string field f extracts.
func StringKey[T any](f func(T) string) KeyFunc[T] {
	return func(dst []byte, v T) []byte { return append(dst, f(v)...) }
}

// BytesKey keys records by the byte-string field f extracts.
func BytesKey[T any](f func(T) []byte) KeyFunc[T] {
	return func(dst []byte, v T) []byte { return append(dst, f(v)...) }
}

// Uint64Key keys records by the integer id f extracts, as 8 big-endian
// bytes.
func Uint64Key[T any](f func(T) uint64) KeyFunc[T] {
	return func(dst []byte, v T) []byte { return binary.BigEndian.AppendUint64(dst, f(v)) }
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
