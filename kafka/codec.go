package kafka

import (
	"encoding/binary"

	"github.com/skewerhq/skewer/stream"
)

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

// RecordCodec encodes a stream.Record (key, then time, each 8 bytes
// big-endian: 16 bytes), the value Producer.SendRecord writes, so that
// aggregates written for the local runtime's sources run unchanged. It is
// an operators.Codec; its bytes are part of the input topic's format
// (docs/kafka.md), which programs in other languages may write.
type RecordCodec struct{}

// Append implements operators.Codec.
func (RecordCodec) Append(dst []byte, r stream.Record) ([]byte, error) {
	return appendRecord(dst, r), nil
}

// Decode implements operators.Codec; it fails with an error wrapping
// ErrCorrupt on anything but 16 bytes.
func (RecordCodec) Decode(src []byte) (stream.Record, error) {
	if len(src) != 16 {
		return stream.Record{}, corrupt("record: %d bytes, want 16", len(src))
	}
	return stream.Record{Key: binary.BigEndian.Uint64(src), Time: int64(binary.BigEndian.Uint64(src[8:]))}, nil
}

func appendRecord(dst []byte, r stream.Record) []byte {
	dst = binary.BigEndian.AppendUint64(dst, r.Key)
	return binary.BigEndian.AppendUint64(dst, uint64(r.Time))
}
