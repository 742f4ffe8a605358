package operators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/skewerhq/skewer/internal/wire"
)

// ErrNoCodec reports keyed state asked for its encoding when a value it
// holds has no Codec (an Aggregate's accumulator, a Joiner's left or right
// records): such state cannot be checkpointed. The wrapping error names
// what lacks one.
var ErrNoCodec = errors.New("operators: no Codec")

// errAggNoCodec is ErrNoCodec for keyed state whose Aggregate has no Codec.
var errAggNoCodec = fmt.Errorf("%w: the Aggregate has none", ErrNoCodec)

// ErrCorrupt reports bytes that are not a valid encoding of keyed state (or
// of a value, by its Codec), or state encoded by an aggregation of
// another shape (phase, windows, lateness).
var ErrCorrupt = errors.New("operators: corrupt state")

func corrupt(err error) error { return fmt.Errorf("%w: %w", ErrCorrupt, err) }

// Codec encodes values of type T, such as an aggregate's accumulators in a
// checkpoint, or the records, partial accumulators and results that cross
// Kafka (package kafka takes the same codecs). Append appends v's encoding
// to dst and returns the extended slice, or an error for a value it cannot
// encode; Decode (see Decoder) decodes exactly one encoding. Decode of
// Append's output gives a value that behaves as v in every later Add,
// Merge and Result. A Codec is safe for concurrent use.
type Codec[T any] interface {
	Append(dst []byte, v T) ([]byte, error)
	Decoder[T]
}

// Decoder is the reading half of a Codec, for values that are only read,
// such as the records of a Kafka topic other programs write (Avro,
// Protobuf or a schema registry's framing: the user's own decoder). Decode
// decodes src, which is exactly one encoding, into a value the caller owns
// (it must not keep src), and returns an error for bytes that are not one.
// A Decoder is safe for concurrent use.
type Decoder[T any] interface {
	Decode(src []byte) (T, error)
}

// Uint64Codec encodes a uint64 as a uvarint: Count's accumulator.
type Uint64Codec struct{}

// Append implements Codec.
func (Uint64Codec) Append(dst []byte, v uint64) ([]byte, error) {
	return wire.AppendUvarint(dst, v), nil
}

// Decode implements Codec.
func (Uint64Codec) Decode(src []byte) (uint64, error) {
	v, n := wire.DecodeUvarint(src)
	if n <= 0 || n != len(src) {
		return 0, fmt.Errorf("%w: uint64: not one canonical uvarint in % x", wire.ErrCorrupt, src)
	}
	return v, nil
}

// Int64Codec encodes an int64 as a zigzag varint: Sum's accumulator.
type Int64Codec struct{}

// Append implements Codec.
func (Int64Codec) Append(dst []byte, v int64) ([]byte, error) { return wire.AppendVarint(dst, v), nil }

// Decode implements Codec.
func (Int64Codec) Decode(src []byte) (int64, error) {
	u, n := wire.DecodeUvarint(src)
	if n <= 0 || n != len(src) {
		return 0, fmt.Errorf("%w: int64: not one canonical varint in % x", wire.ErrCorrupt, src)
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// IntCodec encodes an int as a zigzag varint.
type IntCodec struct{}

// Append implements Codec.
func (IntCodec) Append(dst []byte, v int) ([]byte, error) {
	return wire.AppendVarint(dst, int64(v)), nil
}

// Decode implements Codec.
func (IntCodec) Decode(src []byte) (int, error) {
	v, err := Int64Codec{}.Decode(src)
	if int64(int(v)) != v {
		return 0, fmt.Errorf("%w: int %d out of range", wire.ErrCorrupt, v)
	}
	return int(v), err
}

// Float64Codec encodes a float64 by its IEEE 754 bits, 8 bytes
// little-endian, so every value (NaN payloads, -0) round-trips.
type Float64Codec struct{}

// Append implements Codec.
func (Float64Codec) Append(dst []byte, v float64) ([]byte, error) {
	return wire.AppendU64(dst, math.Float64bits(v)), nil
}

// Decode implements Codec.
func (Float64Codec) Decode(src []byte) (float64, error) {
	r := wire.NewReader(src)
	v := r.U64("float64")
	return math.Float64frombits(v), r.Done()
}

// StringCodec encodes a string as its bytes.
type StringCodec struct{}

// Append implements Codec.
func (StringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }

// Decode implements Codec.
func (StringCodec) Decode(src []byte) (string, error) { return string(src), nil }

// BytesCodec encodes a byte string as itself; Decode returns a copy.
type BytesCodec struct{}

// Append implements Codec.
func (BytesCodec) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }

// Decode implements Codec.
func (BytesCodec) Decode(src []byte) ([]byte, error) { return append([]byte(nil), src...), nil }

// BinaryCodec encodes a pointer to T with T's own binary encoding
// (AppendBinary and UnmarshalBinary, as every sketch of package sketch
// has): the sketch aggregates' accumulators. Decode unmarshals into a new
// T.
type BinaryCodec[T any, P interface {
	*T
	AppendBinary(dst []byte) ([]byte, error)
	UnmarshalBinary(src []byte) error
}] struct{}

// Append implements Codec.
func (BinaryCodec[T, P]) Append(dst []byte, v P) ([]byte, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: nil accumulator", ErrInvalidParameter)
	}
	return v.AppendBinary(dst)
}

// Decode implements Codec.
func (BinaryCodec[T, P]) Decode(src []byte) (P, error) {
	p := P(new(T))
	if err := p.UnmarshalBinary(src); err != nil {
		return nil, err
	}
	return p, nil
}

// NamedCodec encodes WithKey's accumulators: the key with key, the wrapped
// accumulator with acc.
func NamedCodec[K, Acc any](key Codec[K], acc Codec[Acc]) Codec[NamedAcc[K, Acc]] {
	return namedCodec[K, Acc]{key: key, acc: acc}
}

type namedCodec[K, Acc any] struct {
	key Codec[K]
	acc Codec[Acc]
}

func (c namedCodec[K, Acc]) Append(dst []byte, v NamedAcc[K, Acc]) ([]byte, error) {
	dst = wire.AppendBool(dst, v.Named)
	if v.Named {
		// The key's length goes in 4 bytes reserved ahead of it, patched
		// once the key is written.
		mark := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = c.key.Append(dst, v.Key); err != nil {
			return nil, err
		}
		n := len(dst) - mark - 4
		if n > math.MaxUint32 {
			return nil, fmt.Errorf("%w: key of %d bytes", ErrInvalidParameter, n)
		}
		binary.LittleEndian.PutUint32(dst[mark:], uint32(n))
	}
	return c.acc.Append(dst, v.Acc)
}

func (c namedCodec[K, Acc]) Decode(src []byte) (NamedAcc[K, Acc], error) {
	var v NamedAcc[K, Acc]
	r := wire.NewReader(src)
	if v.Named = r.Bool("named"); v.Named {
		n := r.Fixed32("key length")
		kb := r.Next(int(n), "key")
		if err := r.Err(); err != nil {
			return v, err
		}
		k, err := c.key.Decode(kb)
		if err != nil {
			return v, err
		}
		v.Key = k
	}
	if err := r.Err(); err != nil {
		return v, err
	}
	a, err := c.acc.Decode(r.Rest())
	if err != nil {
		return v, err
	}
	v.Acc = a
	return v, nil
}

// CodecOf returns a Codec for the common value types (strings, byte
// strings, uint64, int64, int, float64) and nil for any other: what the
// runtime uses to checkpoint such records in flight, and WithKey to encode
// such keys.
func CodecOf[T any]() Codec[T] {
	var z T
	var c any
	switch any(z).(type) {
	case string:
		c = StringCodec{}
	case []byte:
		c = BytesCodec{}
	case uint64:
		c = Uint64Codec{}
	case int64:
		c = Int64Codec{}
	case int:
		c = IntCodec{}
	case float64:
		c = Float64Codec{}
	default:
		return nil
	}
	return c.(Codec[T])
}
