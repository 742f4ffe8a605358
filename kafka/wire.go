package kafka

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"time"

	"github.com/cespare/xxhash/v2"
)

// The input and output topics hold the user's records only: this package
// never writes to the input topic, and the output topic holds one JSON
// result per key and window (appendResult). The internal topics, partials
// and control, hold records whose value starts with a version byte and a
// kind byte; integers are big-endian and fixed-width. Partials are keyed
// by the original key bytes; the other internal records have no key.
//
//	partials partial:    v kind=1 src(4) fire(8) start(8) acc
//	partials watermark:  v kind=2 src(4) wm(8)
//	partials idle:       v kind=3 src(4)
//	control  input end:  v kind=4 n(4) end(8)*n
//	control  merge end:  v kind=5 q(4)
//
// A partial's identity is (key, start, src, fire): the key and window, the
// input partition it aggregates and the offset of the input record whose
// watermark fired it (or the input's end offset, for the end of input).
// docs/kafka.md documents the format; decoders reject other versions.
const wireVersion = 2

type kind uint8

const (
	kindPartial kind = 1 + iota
	kindPartialWatermark
	kindPartialIdle
	kindInputEnd
	kindMergeEnd
)

const partialHeader = 2 + 4 + 8 + 8

// KeyHash is the 64-bit hash the stages key their state by, for a record's
// key bytes: the key itself when it is 8 bytes (how the Producer writes
// uint64 keys, which are hashes already: see Producer.Send), else its
// XXH64. Results carry the key bytes back. Routing always hashes the key
// bytes (Partitioner).
func KeyHash(key []byte) uint64 {
	if len(key) == 8 {
		return binary.BigEndian.Uint64(key)
	}
	return xxhash.Sum64(key)
}

func appendKey(dst []byte, key uint64) []byte { return binary.BigEndian.AppendUint64(dst, key) }

func appendHeader(dst []byte, k kind) []byte { return append(dst, wireVersion, byte(k)) }

// readHeader checks the version and that the kind is one of want.
func readHeader(src []byte, topic string, want ...kind) (kind, error) {
	if len(src) < 2 {
		return 0, corrupt("%s: %d bytes, want a header", topic, len(src))
	}
	if src[0] != wireVersion {
		if src[0] > wireVersion {
			return 0, ErrVersion
		}
		return 0, corrupt("%s: version %d", topic, src[0])
	}
	k := kind(src[1])
	for _, w := range want {
		if k == w {
			return k, nil
		}
	}
	return 0, corrupt("%s: kind %d", topic, k)
}

func i64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

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

func appendPartialIdle(dst []byte, src int32) []byte {
	return binary.BigEndian.AppendUint32(appendHeader(dst, kindPartialIdle), uint32(src))
}

func decodePartial(v []byte) (partialRecord, error) {
	k, err := readHeader(v, "partials", kindPartial, kindPartialWatermark, kindPartialIdle)
	if err != nil {
		return partialRecord{}, err
	}
	want := map[kind]int{kindPartialWatermark: 14, kindPartialIdle: 6}[k]
	switch {
	case k == kindPartial && len(v) < partialHeader:
		return partialRecord{}, corrupt("partial: %d bytes, want >= %d", len(v), partialHeader)
	case k != kindPartial && len(v) != want:
		return partialRecord{}, corrupt("partials kind %d: %d bytes, want %d", k, len(v), want)
	}
	p := partialRecord{kind: k, src: int32(binary.BigEndian.Uint32(v[2:]))}
	if p.src < 0 {
		return partialRecord{}, corrupt("partials: source partition %d", p.src)
	}
	switch k {
	case kindPartial:
		p.fire, p.start, p.acc = i64(v[6:]), i64(v[14:]), v[partialHeader:]
	case kindPartialWatermark:
		p.fire = i64(v[6:])
	}
	return p, nil
}

// controlRecord is a decoded control value: the input's end offsets, or
// the partials partition whose results are all acknowledged.
type controlRecord struct {
	kind kind
	ends []int64
	q    int32
}

func appendInputEnd(dst []byte, ends []int64) []byte {
	dst = binary.BigEndian.AppendUint32(appendHeader(dst, kindInputEnd), uint32(len(ends)))
	for _, e := range ends {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e))
	}
	return dst
}

func appendMergeEnd(dst []byte, q int32) []byte {
	return binary.BigEndian.AppendUint32(appendHeader(dst, kindMergeEnd), uint32(q))
}

// maxControlPartitions bounds the partition count an input end may carry
// (Kafka's own limits are far below it).
const maxControlPartitions = 1 << 20

func decodeControl(v []byte) (controlRecord, error) {
	k, err := readHeader(v, "control", kindInputEnd, kindMergeEnd)
	if err != nil {
		return controlRecord{}, err
	}
	if len(v) < 6 {
		return controlRecord{}, corrupt("control: %d bytes, want >= 6", len(v))
	}
	n := binary.BigEndian.Uint32(v[2:])
	if k == kindMergeEnd {
		if len(v) != 6 || int32(n) < 0 {
			return controlRecord{}, corrupt("merge end: %d bytes, partition %d", len(v), int32(n))
		}
		return controlRecord{kind: k, q: int32(n)}, nil
	}
	if n == 0 || n > maxControlPartitions || uint64(len(v)) != 6+8*uint64(n) {
		return controlRecord{}, corrupt("input end: %d bytes for %d partitions", len(v), n)
	}
	ends := make([]int64, n)
	for i := range ends {
		if ends[i] = i64(v[6+8*i:]); ends[i] < 0 {
			return controlRecord{}, corrupt("input end: partition %d ends at %d", i, ends[i])
		}
	}
	return controlRecord{kind: k, ends: ends}, nil
}

// A result in the output topic: the key is the original key bytes, the
// Kafka timestamp the window's end, and the value one JSON object
//
//	{"start":"2026-12-01T09:00:00Z","end":"2026-12-01T09:01:00Z","value":V}
//
// with the window's start (inclusive) and end (exclusive) in RFC 3339 with
// nanoseconds, V the result as the merge stage's out codec writes it (JSON;
// null for a value it fails to encode), and
// "update":true added when a late record revised a window already
// reported. A header emittedHeader carries the Unix nanoseconds at which
// the merge stage produced it, for latency; plain consumers ignore it.
const emittedHeader = "skewer-emitted-ns"

// appendResult appends the JSON value of a result; value appends V.
func appendResult(dst []byte, start, end int64, update bool, value func([]byte) []byte) []byte {
	dst = append(dst, `{"start":"`...)
	dst = time.Unix(0, start).UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","end":"`...)
	dst = time.Unix(0, end).UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `",`...)
	if update {
		dst = append(dst, `"update":true,`...)
	}
	dst = append(dst, `"value":`...)
	return append(value(dst), '}')
}

// resultJSON is a decoded result value.
type resultJSON struct {
	Start  time.Time       `json:"start"`
	End    time.Time       `json:"end"`
	Update bool            `json:"update"`
	Value  json.RawMessage `json:"value"`
}

func decodeResult(v []byte) (resultJSON, error) {
	var r resultJSON
	d := json.NewDecoder(bytes.NewReader(v))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return resultJSON{}, corrupt("result: %v", err)
	}
	if d.More() || len(r.Value) == 0 || r.Start.IsZero() || r.End.IsZero() {
		return resultJSON{}, corrupt("result: want one object with start, end and value")
	}
	return r, nil
}

// The stages commit their watermark state with their offsets, as hex: a
// worker the greatest event time before the committed offset, the merge
// stage its watermark per input partition.
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

// noTime is a partition's greatest event time before its first record.
const noTime = math.MinInt64
