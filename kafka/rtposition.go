package kafka

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/stream"
)

// positionVersion is the first byte of a TopicSource worker's position.
const positionVersion = 1

// AppendPosition implements stream.Positioner: the version, the worker's
// watermark, then per partition its number, its next offset (-1: the
// start) and the greatest event time before it (zigzag varints), as
// docs/kafka-runtime.md describes.
func (s *partitionSet[T]) AppendPosition(dst []byte) ([]byte, error) {
	dst = append(dst, positionVersion)
	dst = wire.AppendVarint(dst, s.wm)
	dst = wire.AppendUvarint(dst, uint64(len(s.parts)))
	for i := range s.parts {
		sp := &s.parts[i]
		dst = wire.AppendUvarint(dst, uint64(sp.p))
		dst = wire.AppendVarint(dst, sp.next)
		dst = wire.AppendVarint(dst, sp.maxT)
	}
	return dst, nil
}

// Seek implements stream.Positioner: the worker's next Read starts each
// partition at the position's offset, with its event time and the
// watermark. A position of other partitions (the topic's partition count
// or the source's Workers changed) or damaged bytes fail with an error
// wrapping stream.ErrPosition, and change nothing.
func (s *partitionSet[T]) Seek(pos []byte) error {
	wm, parts, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("%w: topic %q worker %d: %w", stream.ErrPosition, s.cfg.Topic, s.w, err)
	}
	if len(parts) != len(s.parts) {
		return fmt.Errorf("%w: topic %q worker %d: the position holds %d partitions, the worker reads %d (the topic's partitions or SourceConfig.Workers changed)",
			stream.ErrPosition, s.cfg.Topic, s.w, len(parts), len(s.parts))
	}
	for i := range parts {
		if parts[i].p != s.parts[i].p {
			return fmt.Errorf("%w: topic %q worker %d: the position holds partition %d where the worker reads %d (the topic's partitions or SourceConfig.Workers changed)",
				stream.ErrPosition, s.cfg.Topic, s.w, parts[i].p, s.parts[i].p)
		}
	}
	s.Close()
	for i := range parts {
		s.parts[i].next, s.parts[i].maxT = parts[i].next, parts[i].maxT
	}
	s.wm = wm
	return nil
}

// decodePosition decodes AppendPosition's bytes strictly.
func decodePosition(pos []byte) (wm int64, parts []srcPart, err error) {
	r := wire.NewReader(pos)
	if v := r.Byte("version"); r.Err() == nil && v != positionVersion {
		return 0, nil, fmt.Errorf("%w: position version %d, want %d", ErrVersion, v, positionVersion)
	}
	wm = r.Varint("watermark")
	n := r.Count(3, "partitions")
	parts = make([]srcPart, 0, n)
	for range n {
		p := r.Uvarint("partition")
		next := r.Varint("offset")
		maxT := r.Varint("event time")
		if r.Err() != nil {
			break
		}
		if p > 1<<31-1 || next < -1 {
			return 0, nil, corrupt("position: partition %d at offset %d", p, next)
		}
		if len(parts) > 0 && int32(p) <= parts[len(parts)-1].p {
			return 0, nil, corrupt("position: partitions out of order")
		}
		parts = append(parts, srcPart{p: int32(p), next: next, maxT: maxT})
	}
	if err := r.Done(); err != nil {
		return 0, nil, fmt.Errorf("%w: position: %w", ErrCorrupt, err)
	}
	return wm, parts, nil
}
