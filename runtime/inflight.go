package runtime

import (
	"fmt"
	"slices"
	"time"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// Unaligned checkpoints: a worker whose input edge has a codec for its
// records does not hold inputs back when a barrier reaches it. While a
// checkpoint is pending it reads its queue ahead of processing; the first
// barrier it finds there (from any sender) makes it snapshot its state at
// once, before the batches queued ahead of the barrier are processed, and
// pass the barrier on. From then until the barrier has arrived from every
// sender that has not ended, it records every batch that arrives from a
// sender whose barrier has not: those batches (and the ones queued at the
// snapshot) are the records in flight, which the snapshot holds beside
// the state and which a restored worker processes before anything else.
// The barrier thus overtakes the queue instead of waiting behind it, and
// the checkpoint completes once the barriers have arrived, not once the
// queued records have been processed.

// recordCodec encodes a stream.Record: its key in 8 bytes, its time as a
// zigzag varint.
type recordCodec struct{}

func (recordCodec) Append(dst []byte, r stream.Record) ([]byte, error) {
	return wire.AppendVarint(wire.AppendU64(dst, r.Key), r.Time), nil
}

func (recordCodec) Decode(src []byte) (stream.Record, error) {
	rd := wire.NewReader(src)
	r := stream.Record{Key: rd.U64("key"), Time: rd.Varint("time")}
	return r, rd.Done()
}

// codecOf is the codec of records of type T that the runtime knows:
// stream.Record's, or operators.CodecOf's; nil for any other.
func codecOf[T any]() operators.Codec[T] {
	if c, ok := any(recordCodec{}).(operators.Codec[T]); ok {
		return c
	}
	return operators.CodecOf[T]()
}

// partialCodec encodes a partial accumulator with its aggregate's Codec.
type partialCodec[Acc any] struct{ acc operators.Codec[Acc] }

func (c partialCodec[Acc]) Append(dst []byte, p operators.Partial[Acc]) ([]byte, error) {
	dst = wire.AppendVarint(wire.AppendVarint(wire.AppendU64(dst, p.Key), p.Start), p.End)
	return c.acc.Append(dst, p.Acc)
}

func (c partialCodec[Acc]) Decode(src []byte) (operators.Partial[Acc], error) {
	r := wire.NewReader(src)
	p := operators.Partial[Acc]{Key: r.U64("key"), Start: r.Varint("start"), End: r.Varint("end")}
	if err := r.Err(); err != nil {
		return p, err
	}
	acc, err := c.acc.Decode(r.Rest())
	p.Acc = acc
	return p, err
}

// resultCodec encodes a window's result with a Codec of its value.
type resultCodec[Out any] struct{ v operators.Codec[Out] }

func (c resultCodec[Out]) Append(dst []byte, res operators.Result[Out]) ([]byte, error) {
	dst = wire.AppendVarint(wire.AppendVarint(wire.AppendU64(dst, res.Key), res.Start), res.End)
	return c.v.Append(wire.AppendBool(dst, res.Update), res.Value)
}

func (c resultCodec[Out]) Decode(src []byte) (operators.Result[Out], error) {
	r := wire.NewReader(src)
	res := operators.Result[Out]{Key: r.U64("key"), Start: r.Varint("start"), End: r.Varint("end"), Update: r.Bool("update")}
	if err := r.Err(); err != nil {
		return res, err
	}
	v, err := c.v.Decode(r.Rest())
	res.Value = v
	return res, err
}

// resultCodecOf is the codec of Result[Out] when Out has one
// (operators.CodecOf), else nil.
func resultCodecOf[Out any]() operators.Codec[operators.Result[Out]] {
	if v := codecOf[Out](); v != nil {
		return resultCodec[Out]{v: v}
	}
	return nil
}

const (
	flagEOF  = 1 << iota // the sender ended with this batch
	flagIdle             // the sender was idle as of this batch
	flagKeys             // the batch carries its events' keys
)

// appendBatch appends bt's records, keys, watermark, sender and flags to
// dst (not its barrier: a recorded batch precedes it).
func appendBatch[T any](dst []byte, bt *batch[T], c operators.Codec[T]) ([]byte, error) {
	var flags byte
	if bt.eof {
		flags |= flagEOF
	}
	if bt.idle {
		flags |= flagIdle
	}
	keyed := len(bt.keys) == len(bt.ev) && len(bt.ev) > 0
	if keyed {
		flags |= flagKeys
	}
	dst = append(wire.AppendUvarint(dst, uint64(bt.from)), flags)
	dst = wire.AppendVarint(dst, bt.wm)
	dst = wire.AppendUvarint(dst, uint64(len(bt.ev)))
	for i := range bt.ev {
		dst = wire.AppendVarint(dst, bt.ev[i].Time)
		var mark int
		dst, mark = wire.BeginPrefixed(dst)
		var err error
		if dst, err = c.Append(dst, bt.ev[i].Value); err != nil {
			return nil, err
		}
		dst = wire.EndPrefixed(dst, mark)
		if keyed {
			dst = wire.AppendU64(dst, bt.keys[i])
		}
	}
	return dst, nil
}

// decodeBatches decodes what appendBatch wrote, batch after batch, into
// new local batches of an edge with the given number of senders.
func decodeBatches[T any](b []byte, c operators.Codec[T], senders int) ([]*batch[T], error) {
	r := wire.NewReader(b)
	var out []*batch[T]
	for r.Err() == nil && r.Len() > 0 {
		bt := &batch[T]{local: true}
		bt.from = int32(r.Int(senders-1, "sender"))
		flags := r.Byte("flags")
		if flags&^(flagEOF|flagIdle|flagKeys) != 0 && r.Err() == nil {
			r.Fail("flags %#x", flags)
		}
		bt.eof, bt.idle = flags&flagEOF != 0, flags&flagIdle != 0
		bt.wm = r.Varint("watermark")
		n := r.Count(2, "records")
		if r.Err() != nil {
			break
		}
		bt.ev = make([]operators.Event[T], 0, n)
		for range n {
			t := r.Varint("time")
			v := r.Bytes("record")
			if r.Err() != nil {
				break
			}
			val, err := c.Decode(v)
			if err != nil {
				r.Fail("record: %v", err)
				break
			}
			bt.ev = append(bt.ev, operators.Event[T]{Time: t, Value: val})
			if flags&flagKeys != 0 {
				bt.keys = append(bt.keys, r.U64("key"))
			}
		}
		if flags&flagKeys != 0 && n == 0 && r.Err() == nil {
			r.Fail("keys flagged on an empty batch")
		}
		out = append(out, bt)
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	return out, nil
}

// unaligner is a consuming worker's side of unaligned checkpoints (see
// the comment at the top of this file). Every batch the worker takes from
// its inbox goes through arrive and then its queue, in order, so per
// sender the batches are processed in the order they were sent.
type unaligner[T any] struct {
	codec operators.Codec[T]
	co    *coordinator
	// snapshot takes the worker's state for checkpoint id and passes the
	// barrier on; submit hands the completed snapshot to the coordinator.
	snapshot func(id uint64) (workerSnapshot, error)
	submit   func(id uint64, s *workerSnapshot, align time.Duration)
	ended    []bool // the worker's: which senders' ends it has processed

	last  uint64 // the newest checkpoint snapshotted
	id    uint64 // the checkpoint whose in-flight batches are recorded, 0 none
	done  []bool // per sender: its barrier id, or its end, has arrived
	ndone int
	start time.Time
	snap  workerSnapshot
	log   []byte // the recorded batches
	queue fifo[*batch[T]]
}

func newUnaligner[T any](codec operators.Codec[T], co *coordinator, ended []bool,
	snapshot func(uint64) (workerSnapshot, error), submit func(uint64, *workerSnapshot, time.Duration)) *unaligner[T] {
	return &unaligner[T]{codec: codec, co: co, ended: ended, snapshot: snapshot, submit: submit, done: make([]bool, len(ended))}
}

// pending reports whether the worker must read its inbox ahead: a
// checkpoint it has not snapshotted is asked for, or it is recording one.
func (u *unaligner[T]) pending() bool { return u.id != 0 || u.co.trigger.Load() > u.last }

// readAhead takes every batch queued in the inbox without waiting.
func (u *unaligner[T]) readAhead(in *inbox[T]) error {
	for {
		select {
		case bt := <-in.ch:
			if err := u.arrive(bt); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// arrive takes a batch from the inbox into the queue: the first barrier
// of a checkpoint snapshots the worker before anything queued is
// processed, and while a checkpoint records, batches from senders whose
// barrier has not arrived are recorded.
func (u *unaligner[T]) arrive(bt *batch[T]) error {
	if u.id == 0 && bt.barrier != 0 && !bt.stop { // a stop barrier is aligned (Job.Stop)
		if bt.barrier <= u.last {
			return fmt.Errorf("runtime: barrier %d after checkpoint %d", bt.barrier, u.last)
		}
		if err := u.begin(bt.barrier); err != nil {
			return err
		}
	}
	u.queue.push(bt)
	if u.id == 0 {
		return nil
	}
	if bt.barrier != 0 && bt.barrier != u.id && !bt.stop {
		return fmt.Errorf("runtime: barrier %d from sender %d while checkpoint %d records", bt.barrier, bt.from, u.id)
	}
	if err := u.record(bt); err != nil {
		return err
	}
	return u.complete()
}

// begin snapshots the worker for checkpoint id and records what is
// queued: it arrived before the barrier and has not been processed.
func (u *unaligner[T]) begin(id uint64) error {
	s, err := u.snapshot(id)
	if err != nil {
		return err
	}
	u.id, u.last, u.snap, u.start = id, id, s, time.Now()
	u.log = u.log[:0]
	copy(u.done, u.ended)
	u.ndone = 0
	for _, d := range u.done {
		if d {
			u.ndone++
		}
	}
	for _, q := range u.queue.pending() {
		if err := u.record(q); err != nil {
			return err
		}
	}
	return nil
}

// record logs bt when its sender's barrier has not arrived yet, and marks
// the sender done when bt carries the barrier or the sender's end.
func (u *unaligner[T]) record(bt *batch[T]) error {
	if u.done[bt.from] {
		return nil
	}
	var err error
	if u.log, err = appendBatch(u.log, bt, u.codec); err != nil {
		return err
	}
	if bt.barrier == u.id || bt.eof {
		u.done[bt.from] = true
		u.ndone++
	}
	return nil
}

// complete submits the snapshot once every sender is done.
func (u *unaligner[T]) complete() error {
	if u.ndone < len(u.done) {
		return nil
	}
	u.snap.inflight = slices.Clone(u.log)
	u.submit(u.id, &u.snap, time.Since(u.start))
	u.id, u.snap = 0, workerSnapshot{}
	return nil
}

// pop returns the next queued batch, or nil.
func (u *unaligner[T]) pop() *batch[T] { return u.queue.pop() }
