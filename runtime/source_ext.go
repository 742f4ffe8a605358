package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/stream"
)

// ExternalInput is one source worker's input from a system the job does
// not own (the partitions of a Kafka topic, say): a replayable input
// whose position is the opaque bytes its stream.Positioner methods write,
// kept in the worker's checkpoint snapshot and handed back to Seek at a
// restore or a restart, so that the external system holds no position of
// its own as the truth.
//
// Read fills buf with up to len(buf) values: those ready now, or, when
// none is, those that come within wait (then it may return 0 values,
// which is not the end). end reports that the input ended after the
// values returned. An error stops the job (Run returns it, in a
// WorkerError), as an error of user code does; Restart retries it.
//
// Watermark is the input's own watermark after the values read so far
// (operators.NoWatermark until it has one): the source sends it instead
// of the bounded-out-of-orderness watermark of its records' times, so an
// input that merges several logs (Kafka partitions) can hold its
// watermark at the slowest of them, and let idle ones go. It must not
// decrease, and Seek must restore the one the position had.
//
// Close releases what the input holds (connections); the worker calls it
// when it stops, and a later attempt Seeks and Reads it again. The
// runtime calls an input's methods from one goroutine at a time.
type ExternalInput[T any] interface {
	stream.Positioner
	Read(ctx context.Context, buf []T, wait time.Duration) (n int, end bool, err error)
	Watermark() int64
	Close()
}

// FromExternal adds a source of the user's records of type T, reading
// each input in its own worker (parallelism len(inputs)): a record and a
// barrier never wait on each other longer than the flush interval, which
// bounds each Read's wait. keyOf and event time as for FromFiller; the
// watermark is the inputs' own (ExternalInput.Watermark), so the
// OutOfOrderness option has no effect. A checkpoint holds each input's
// position; a job restores only at the source's parallelism
// (ErrIncompatibleCheckpoint otherwise), each worker from its own input's
// position.
func FromExternal[T any](j *Job, name string, inputs []ExternalInput[T], keyOf func(T) uint64, opts ...SourceOpt) *Stream[T] {
	readers := make([]func() reader[T], len(inputs))
	pos := make([]stream.Positioner, len(inputs))
	for i, in := range inputs {
		if in == nil {
			j.fail(invalidParam(fmt.Sprintf("%s inputs[%d]", name, i), "nil", "an ExternalInput"))
			continue
		}
		readers[i] = func() reader[T] { return &extReader[T]{in: in, wait: j.cfg.flush} } // one per attempt
		pos[i] = in
	}
	return addSource(j, name, readers, pos, keyOf, nil, opts)
}

// extReader reads an ExternalInput: what is ready, else, after sending
// what the worker holds, what comes within the flush interval; it and keeps the read's error for the worker
// (failure), which stops on it.
type extReader[T any] struct {
	in   ExternalInput[T]
	wait time.Duration
	err  error
}

func (r *extReader[T]) read(ctx context.Context, buf []T, held func()) (int, bool) {
	n, end, err := r.in.Read(ctx, buf, 0)
	if err == nil && n == 0 && !end {
		held()
		n, end, err = r.in.Read(ctx, buf, r.wait)
	}
	if err != nil {
		r.err = err
		return 0, false
	}
	return n, end
}

func (r *extReader[T]) stop() { r.in.Close() }

// failure is the error that stops the worker, if any.
func (r *extReader[T]) failure() error { return r.err }

// watermark is the input's own.
func (r *extReader[T]) watermark() int64 { return r.in.Watermark() }

// ownWatermark is a reader whose input has its own watermark and may fail
// (an ExternalInput): the source worker sends that watermark and stops on
// the failure.
type ownWatermark interface {
	watermark() int64
	failure() error
}
