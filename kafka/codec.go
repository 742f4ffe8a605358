package kafka

import (
	"encoding/binary"

	"github.com/skewerhq/skewer/stream"
)

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
