package runtime

import (
	"context"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

type sourceStage struct {
	stageBase
	streams []datasets.Stream
	out     *port[datasets.Record]
	colls   []*collector[datasets.Record]
}

// Source adds a source reading each stream in its own worker (parallelism
// len(streams)); every worker has its own partitioner instance on each
// outgoing edge. Records keep Record.Time as event time (or get their ingest
// time with ProcessingTime) and the stream is keyed by Record.Key. Parallel
// sources' watermarks are merged downstream as a minimum.
func Source(j *Job, name string, streams []datasets.Stream, opts ...SourceOpt) *Stream[datasets.Record] {
	st := &sourceStage{streams: streams, out: &port[datasets.Record]{}}
	st.name, st.source = name, true
	st.cfg.parallelism = len(streams)
	for _, o := range opts {
		o.applySource(&st.cfg)
	}
	st.cfg.parallelism = len(streams)
	if err := st.cfg.validate(); err != nil {
		j.fail(err)
	}
	for i, s := range streams {
		if s == nil {
			j.fail(invalidParam("streams[i]", i, "non-nil"))
		}
	}
	if j.ran.Load() {
		j.fail(ErrAlreadyRun)
	}
	j.addStage(st)
	return &Stream[datasets.Record]{job: j, st: &st.stageBase, port: st.out, keyOf: recordKey, recKey: true}
}

func recordKey(r datasets.Record) uint64 { return r.Key }

func (s *sourceStage) prepareInputs() {}

func (s *sourceStage) prepareOutputs(ctx context.Context) error {
	s.colls = make([]*collector[datasets.Record], s.cfg.parallelism)
	for w := range s.colls {
		c, err := newCollector(ctx, s.job, s.out, w, &s.metrics[w])
		if err != nil {
			return err
		}
		s.colls[w] = c
	}
	return nil
}

func (s *sourceStage) work(ctx context.Context, w int) error {
	j := s.job
	m := &s.metrics[w]
	out := s.colls[w]
	stream := s.streams[w]
	gen, err := operators.NewBoundedOutOfOrderness(s.cfg.disorder)
	if err != nil {
		return err
	}
	buf := make([]datasets.Record, j.cfg.batchSize)
	srv := server{cost: s.cfg.cost, sleep: j.cfg.sleep}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	rate := s.cfg.rate
	emitted := 0
	lastFlush := j.now()
	for {
		if ctx.Err() != nil {
			return nil
		}
		want := len(buf)
		now := j.now()
		if rate > 0 {
			due := int(float64(now)*rate/1e9) + 1 - emitted
			if due <= 0 {
				next := time.Duration(float64(emitted) / rate * 1e9)
				wait := next - time.Duration(now)
				if wait > j.cfg.flush {
					wait = j.cfg.flush
				}
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-timer.C:
				case <-ctx.Done():
					return nil
				}
				if s.cfg.procTime {
					gen.Observe(time.Now().UnixNano())
					out.setWatermark(gen.Watermark())
				}
				if j.now()-lastFlush >= int64(j.cfg.flush) {
					out.flush()
					lastFlush = j.now()
				}
				continue
			}
			want = min(due, want)
		}
		t0 := time.Now()
		n := stream.Fill(buf[:want])
		if n > 0 {
			if !srv.charge(ctx, n, time.Now()) {
				return nil
			}
			var wall int64
			if s.cfg.procTime {
				wall = time.Now().UnixNano()
			}
			out.setIngest(now)
			switch {
			case rate > 0 || s.cfg.procTime:
				for i := range buf[:n] {
					r := buf[i]
					if rate > 0 {
						out.setIngest(int64(float64(emitted+i) / rate * 1e9))
					}
					t := r.Time
					if s.cfg.procTime {
						t = wall
					}
					gen.Observe(t)
					out.emit(operators.Event[datasets.Record]{Time: t, Value: r})
				}
			default: // the common case, kept tight
				maxT := buf[0].Time
				for i := range buf[:n] {
					maxT = max(maxT, buf[i].Time)
				}
				emitRecords(out, buf[:n])
				gen.Observe(maxT)
			}
			emitted += n
			out.setWatermark(gen.Watermark())
			m.in.Add(uint64(n))
			m.batches.Add(1)
		}
		if n < want {
			out.close() // the records go with the end of input
			m.busy.Add(uint64(time.Since(t0)))
			return nil
		}
		// Before the next Fill, which may block: receivers with an empty
		// queue get what this buffer left them.
		out.flushIdle()
		now = j.now()
		if now-lastFlush >= int64(j.cfg.flush) {
			out.flush()
			lastFlush = now
		}
		m.busy.Add(uint64(time.Since(t0)))
	}
}

// emitRecords emits recs, timed by Record.Time, to every outgoing edge: the
// source's common case, routed a whole buffer at a time.
func emitRecords(c *collector[datasets.Record], recs []datasets.Record) {
	c.count += uint64(len(recs))
	for _, o := range c.outs {
		putRecords(o, recs, c.wm)
	}
}

// putRecords is put for every record of recs. On a hash edge keyed by the
// records' own key it routes with a direct (inlined) call and appends each
// record to its receiver's open batch in one loop.
func putRecords(o *outbox[datasets.Record], recs []datasets.Record, wm int64) {
	h, ok := o.part.(*partition.Hash)
	if !ok || !o.e.recKey {
		for i := range recs {
			o.put(operators.Event[datasets.Record]{Time: recs[i].Time, Value: recs[i]}, wm)
		}
		return
	}
	for i := range recs {
		r := &recs[i]
		d := h.Route(r.Key)
		b := o.cur[d]
		if b == nil {
			b = o.open(d)
		}
		b.ev = append(b.ev, operators.Event[datasets.Record]{Time: r.Time, Value: *r})
		if len(b.ev) == o.size {
			o.send(d, wm, false)
		}
	}
}
