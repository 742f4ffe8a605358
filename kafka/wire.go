package kafka

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// Every record value this package writes starts with a version byte and a
// kind byte; integers are big-endian and fixed-width. Keys of data records
// are the 8 big-endian bytes of the key hash.
//
//	input    data:      v kind=1 wm(8) time(8) payload
//	input    watermark: v kind=2 wm(8)
//	partials partial:   v kind=3 src(4) fire(8) start(8) acc
//	partials watermark: v kind=4 src(4) wm(8)
//	output   result:    v kind=5 start(8) end(8) update(1) value
//	output   end:       v kind=6 from(4)
//
// A partial's identity is (key, start, src, fire): the key and window, the
// input partition it aggregates and the offset of the input record whose
// watermark fired it.
const wireVersion = 1

type kind uint8

const (
	kindData kind = 1 + iota
	kindInputWatermark
	kindPartial
	kindPartialWatermark
	kindResult
	kindEnd
)

const (
	inputHeader   = 2 + 8 + 8
	partialHeader = 2 + 4 + 8 + 8
	resultHeader  = 2 + 8 + 8 + 1
)

// KeyHash is the key hash of a Kafka record key: the key itself when it is 8
// bytes (how this package writes uint64 keys, which are hashes already:
// see Producer.Send), else its XXH64. It keys the stages' state; routing
// always hashes the key bytes (Partitioner).
func KeyHash(key []byte) uint64 {
	if len(key) == 8 {
		return binary.BigEndian.Uint64(key)
	}
	return xxhash.Sum64(key)
}

func appendKey(dst []byte, key uint64) []byte { return binary.BigEndian.AppendUint64(dst, key) }

func appendHeader(dst []byte, k kind) []byte { return append(dst, wireVersion, byte(k)) }

func readHeader(src []byte) (kind, error) {
	if len(src) < 2 {
		return 0, corrupt("%d bytes, want a header", len(src))
	}
	if src[0] != wireVersion {
		if src[0] > wireVersion {
			return 0, ErrVersion
		}
		return 0, corrupt("version %d", src[0])
	}
	k := kind(src[1])
	if k < kindData || k > kindEnd {
		return 0, corrupt("kind %d", k)
	}
	return k, nil
}

func i64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// inputRecord is a decoded input value.
type inputRecord struct {
	kind    kind
	wm, t   int64
	payload []byte // aliases the value
}

func appendInput(dst []byte, wm, t int64, payload []byte) []byte {
	dst = appendHeader(dst, kindData)
	dst = binary.BigEndian.AppendUint64(dst, uint64(wm))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t))
	return append(dst, payload...)
}

func appendInputWatermark(dst []byte, wm int64) []byte {
	dst = appendHeader(dst, kindInputWatermark)
	return binary.BigEndian.AppendUint64(dst, uint64(wm))
}

func decodeInput(v []byte) (inputRecord, error) {
	k, err := readHeader(v)
	if err != nil {
		return inputRecord{}, err
	}
	switch k {
	case kindData:
		if len(v) < inputHeader {
			return inputRecord{}, corrupt("input data: %d bytes, want >= %d", len(v), inputHeader)
		}
		return inputRecord{kind: k, wm: i64(v[2:]), t: i64(v[10:]), payload: v[inputHeader:]}, nil
	case kindInputWatermark:
		if len(v) != 10 {
			return inputRecord{}, corrupt("input watermark: %d bytes, want 10", len(v))
		}
		return inputRecord{kind: k, wm: i64(v[2:])}, nil
	}
	return inputRecord{}, corrupt("kind %d in the input topic", k)
}

// partialRecord is a decoded partials value; for a watermark fire holds
// the watermark.
type partialRecord struct {
	kind        kind
	src         int32
	fire, start int64
	acc         []byte
}

func appendPartial(dst []byte, src int32, fire, start int64, acc func([]byte) []byte) []byte {
	return acc(appendPartialHeader(dst, src, fire, start))
}

// appendPartialHeader appends a partial up to its accumulator.
func appendPartialHeader(dst []byte, src int32, fire, start int64) []byte {
	dst = appendHeader(dst, kindPartial)
	dst = binary.BigEndian.AppendUint32(dst, uint32(src))
	dst = binary.BigEndian.AppendUint64(dst, uint64(fire))
	return binary.BigEndian.AppendUint64(dst, uint64(start))
}

func appendPartialWatermark(dst []byte, src int32, wm int64) []byte {
	dst = appendHeader(dst, kindPartialWatermark)
	dst = binary.BigEndian.AppendUint32(dst, uint32(src))
	return binary.BigEndian.AppendUint64(dst, uint64(wm))
}

func decodePartial(v []byte) (partialRecord, error) {
	k, err := readHeader(v)
	if err != nil {
		return partialRecord{}, err
	}
	switch k {
	case kindPartial:
		if len(v) < partialHeader {
			return partialRecord{}, corrupt("partial: %d bytes, want >= %d", len(v), partialHeader)
		}
		p := partialRecord{kind: k, src: int32(binary.BigEndian.Uint32(v[2:])), fire: i64(v[6:]), start: i64(v[14:]), acc: v[partialHeader:]}
		if p.src < 0 {
			return partialRecord{}, corrupt("partial: source partition %d", p.src)
		}
		return p, nil
	case kindPartialWatermark:
		if len(v) != 14 {
			return partialRecord{}, corrupt("partials watermark: %d bytes, want 14", len(v))
		}
		p := partialRecord{kind: k, src: int32(binary.BigEndian.Uint32(v[2:])), fire: i64(v[6:])}
		if p.src < 0 {
			return partialRecord{}, corrupt("partials watermark: source partition %d", p.src)
		}
		return p, nil
	}
	return partialRecord{}, corrupt("kind %d in the partials topic", k)
}

// resultRecord is a decoded output value; for an end marker from holds the
// partials partition that ended.
type resultRecord struct {
	kind       kind
	start, end int64
	update     bool
	from       int32
	value      []byte
}

func appendResult(dst []byte, start, end int64, update bool, out func([]byte) []byte) []byte {
	return out(appendResultHeader(dst, start, end, update))
}

// appendResultHeader appends a result up to its value.
func appendResultHeader(dst []byte, start, end int64, update bool) []byte {
	dst = appendHeader(dst, kindResult)
	dst = binary.BigEndian.AppendUint64(dst, uint64(start))
	dst = binary.BigEndian.AppendUint64(dst, uint64(end))
	u := byte(0)
	if update {
		u = 1
	}
	return append(dst, u)
}

func appendEnd(dst []byte, from int32) []byte {
	dst = appendHeader(dst, kindEnd)
	return binary.BigEndian.AppendUint32(dst, uint32(from))
}

func decodeResult(v []byte) (resultRecord, error) {
	k, err := readHeader(v)
	if err != nil {
		return resultRecord{}, err
	}
	switch k {
	case kindResult:
		if len(v) < resultHeader {
			return resultRecord{}, corrupt("result: %d bytes, want >= %d", len(v), resultHeader)
		}
		if v[18] > 1 {
			return resultRecord{}, corrupt("result: update flag %d", v[18])
		}
		return resultRecord{kind: k, start: i64(v[2:]), end: i64(v[10:]), update: v[18] == 1, value: v[resultHeader:]}, nil
	case kindEnd:
		if len(v) != 6 {
			return resultRecord{}, corrupt("end: %d bytes, want 6", len(v))
		}
		r := resultRecord{kind: k, from: int32(binary.BigEndian.Uint32(v[2:]))}
		if r.from < 0 {
			return resultRecord{}, corrupt("end: partition %d", r.from)
		}
		return r, nil
	}
	return resultRecord{}, corrupt("kind %d in the output topic", k)
}

// The merge stage commits its per-source watermarks with its offsets, as
// the hex of 8 bytes per input partition.
func encodeWatermarks(wms []int64) string {
	b := make([]byte, 0, 8*len(wms))
	for _, w := range wms {
		b = binary.BigEndian.AppendUint64(b, uint64(w))
	}
	return hex.EncodeToString(b)
}

func decodeWatermarks(s string, n int) ([]int64, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 8*n {
		return nil, corrupt("committed watermarks %q: want %d hex int64", s, n)
	}
	wms := make([]int64, n)
	for i := range wms {
		wms[i] = i64(b[8*i:])
	}
	return wms, nil
}
