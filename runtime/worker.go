package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/skewerhq/skewer/operators"
)

// worker is one non-source worker of a stage: its loop takes batches,
// charges their cost, processes them, merges watermarks, advances, sends
// what it holds for receivers with an empty queue, flushes everything on
// the tick, and at the end of all inputs fires everything and closes the
// outputs. Before it waits for input it sends every batch it holds.
//
// Idleness: only a source's silence counts (IdleTimeout); a worker whose
// inputs are all idle first sends what it holds back (handler.idle), then
// declares itself idle on its next batches, so its receivers never stop
// waiting for a worker that holds partials or is merely busy.
//
// Checkpoints (when the job takes them): a batch may carry a barrier
// after its records; the worker aligns its senders' barriers (aligner), or
// lets them overtake the queued records (unaligner), then snapshots its
// state, passes the barrier on and hands the snapshot to the coordinator.
// A worker restored from a snapshot starts from it.
//
// Live rescaling (ActiveWorkers): lw moves key groups while the job runs;
// while the state of a key group it gains is on its way, its watermark
// holds (heldWM is the newest since), so that no window fires, and no
// record it holds back turns late, before the state is in.
//
// A worker is used by its goroutine alone.
type worker[In any] struct {
	ctx  context.Context
	b    *stageBase
	j    *Job
	w    int
	m    *workerMetrics
	e    *edge[In]
	in   *inbox[In]
	h    handler[In]
	outs []output
	tr   *operators.WatermarkTracker
	co   *coordinator
	srv  server
	tick *time.Ticker

	// ended marks the senders whose end this worker has processed (shared
	// with the unaligner and the live worker); eofs counts them.
	ended []bool
	eofs  int
	// replay holds the batches in flight to this worker that its restored
	// snapshot recorded (an unaligned checkpoint): processed first.
	replay []*batch[In]
	idle   bool
	// stopped marks the senders whose stop barrier (stopID) has come.
	stopped  []bool
	nstopped int
	stopID   uint64

	al *aligner[In]
	ua *unaligner[In]

	lw        *liveWorker[In]
	hub       chan migration // lw's inbox of states from other workers (nil: never ready)
	heldWM    int64
	holdingWM bool

	// fault, set by tests, is called with the records taken so far.
	fault func(stage string, worker int, records uint64) error
	taken uint64
}

// consume runs worker w of the stage b, whose input is e: see worker.
func consume[In any](ctx context.Context, b *stageBase, w int, e *edge[In], h handler[In], outs []output) error {
	k, done, err := newWorker(ctx, b, w, e, h, outs)
	if err != nil || done {
		return err
	}
	defer k.tick.Stop()
	return k.run()
}

// newWorker sets worker w up: restored from its snapshot (or its share of
// a stage restored at other parallelism), or fresh. done reports a worker
// with nothing left to do (it ended before the checkpoint it restores,
// or every input of its share has ended).
func newWorker[In any](ctx context.Context, b *stageBase, w int, e *edge[In], h handler[In], outs []output) (k *worker[In], done bool, err error) {
	j := b.job
	k = &worker[In]{ctx: ctx, b: b, j: j, w: w, m: &b.metrics[w], e: e, in: e.inboxes[w], h: h, outs: outs, co: j.co,
		ended: make([]bool, e.senders), stopped: make([]bool, e.senders), fault: j.cfg.ckpt.fault}
	timeout := j.cfg.idleTimeout
	if !e.fromSource {
		timeout = 0
	}
	if k.tr, err = operators.NewWatermarkTracker(e.senders, timeout); err != nil {
		return nil, false, err
	}
	endedAtStart, done, err := k.restore()
	if err != nil || done {
		return nil, done, err
	}
	k.tr.Start(j.now())
	k.srv = server{cost: b.cfg.cost, sleep: j.cfg.sleep}
	if endedAtStart {
		if k.co != nil {
			s, err := k.state(true)
			if err != nil {
				return nil, false, err
			}
			k.submit(0, &s, 0)
		}
		return nil, true, nil
	}
	switch {
	case k.co == nil:
	case j.cfg.ckpt.unaligned && e.codec != nil:
		k.ua = newUnaligner(e.codec, k.co, k.ended, func(id uint64) (workerSnapshot, error) { return k.snapshot(id, false) }, k.submit)
	default:
		k.al = newAligner[In](e.senders)
	}
	if b.live != nil {
		if k.lw, err = newLiveWorker(b.live, w, e.senders, h); err != nil {
			return nil, false, err
		}
		k.hub = b.live.hub[w]
	}
	k.tick = time.NewTicker(j.cfg.flush)
	return k, false, nil
}

// restore takes the worker's state back: its share of a stage restored at
// other parallelism (endedAtStart when every input of it has ended), its
// snapshot (done when it had ended before the checkpoint), or a fresh
// start.
func (k *worker[In]) restore() (endedAtStart, done bool, err error) {
	b, w, e, h := k.b, k.w, k.e, k.h
	snap := b.restoredSnapshot(w)
	switch {
	case b.rescale != nil:
		if endedAtStart, err = restoreRescaled(b, w, e, k.tr, h, k.outs, k.ended); err != nil {
			return false, false, err
		}
	case snap != nil:
		s, err := decodeSnapshot(snap, false, e.senders, len(k.outs))
		if err != nil {
			return false, false, err
		}
		if err := restoreConsumer(s, k.tr, h, k.outs, k.m); err != nil {
			return false, false, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
		}
		if s.ended {
			if k.co != nil {
				k.co.submit(ack{stage: b.index, worker: w, final: true, data: snap, txn: txnOf(b, s.hand)})
			}
			return false, true, nil
		}
		copy(k.ended, s.sendersEnded)
		if len(s.inflight) > 0 {
			if e.codec == nil {
				return false, false, fmt.Errorf("%w: in-flight records for an edge without a codec", ErrCorruptSnapshot)
			}
			if k.replay, err = decodeBatches(s.inflight, e.codec, e.senders); err != nil {
				return false, false, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
			}
		}
	default:
		return false, false, h.restoreState(nil)
	}
	for _, x := range k.ended {
		if x {
			k.eofs++
		}
	}
	return endedAtStart, false, nil
}

// run is the worker's loop: until every input ends, the stop checkpoint
// is taken, the context ends or something fails.
func (k *worker[In]) run() error {
	for {
		bt, err := k.next()
		if err != nil || bt == nil {
			return err
		}
		if end, err := k.take(bt); err != nil || end {
			return err
		}
	}
}

// next returns the next batch to process: one replayed from the restored
// snapshot, one the aligner or unaligner releases, or one received
// (ticks and arriving key-group states are handled while it waits). It
// returns nil when the context ends.
func (k *worker[In]) next() (*batch[In], error) {
	for {
		bt, err := k.queued()
		if bt != nil || err != nil {
			return bt, err
		}
		if len(k.in.ch) == 0 {
			// Nothing queued: hold nothing back while waiting.
			for _, o := range k.outs {
				o.flushHeld()
			}
		}
		bt, ended, err := k.receive()
		if err != nil || ended {
			return nil, err
		}
		if bt == nil {
			continue
		}
		if k.al != nil && k.al.holds(bt) {
			k.al.hold(bt)
			bt.ev, bt.keys = bt.ev[:0], bt.keys[:0]
			k.in.free <- bt
			continue
		}
		if k.ua != nil {
			if err := k.ua.arrive(bt); err != nil {
				return nil, err
			}
			bt = k.ua.pop()
		}
		return bt, nil
	}
}

// queued returns a batch already taken and due (replayed, or released by
// the aligner or unaligner), nil when there is none.
func (k *worker[In]) queued() (*batch[In], error) {
	switch {
	case len(k.replay) > 0:
		bt := k.replay[0]
		k.replay = k.replay[1:]
		return bt, nil
	case k.al != nil:
		return k.al.next(), nil
	case k.ua != nil:
		if k.ua.pending() {
			if err := k.ua.readAhead(k.in); err != nil {
				return nil, err
			}
		}
		return k.ua.pop(), nil
	}
	return nil, nil
}

// receive waits for a batch from the inbox, handling a tick or a
// key-group state that comes first (then it returns no batch); ended
// reports the context's end. The time it waits is time spent waiting for
// input, until the batch came (not until this goroutine ran).
func (k *worker[In]) receive() (bt *batch[In], ended bool, err error) {
	select {
	case bt = <-k.in.ch:
		return bt, false, nil
	case <-k.tick.C:
		return nil, false, k.onTick()
	case mg := <-k.hub:
		return nil, false, k.resumeWM(k.lw.arrived(mg, k.ended))
	default:
	}
	w0 := time.Now()
	select {
	case bt = <-k.in.ch:
		if arrived := k.j.start.Add(time.Duration(bt.sent)); arrived.After(w0) {
			k.m.waitIn.Add(uint64(min(arrived.Sub(w0), time.Since(w0))))
		}
		return bt, false, nil
	case <-k.tick.C:
		k.m.waitedIn(w0)
		return nil, false, k.onTick()
	case mg := <-k.hub:
		k.m.waitedIn(w0)
		return nil, false, k.resumeWM(k.lw.arrived(mg, k.ended))
	case <-k.ctx.Done():
		return nil, true, nil
	}
}

// take processes one batch: its records, then what follows them (its
// end, a barrier, a live-rescaling marker), then the watermark. end
// reports that the worker is done: every input ended, the stop
// checkpoint was taken, or the context ended while the batch's cost was
// charged.
func (k *worker[In]) take(bt *batch[In]) (end bool, err error) {
	t0 := time.Now()
	for _, o := range k.outs {
		o.step()
	}
	k.m.batches.Add(1)
	now := int64(t0.Sub(k.j.start))
	from := int(bt.from)
	k.tr.Update(from, bt.wm, len(bt.ev) > 0, now)
	k.tr.SetIdle(from, bt.idle)
	if k.idle && k.tr.Live(from, now) {
		// Active again before this batch's records go out, so that they
		// travel in batches not marked idle.
		k.idle = false
		for _, o := range k.outs {
			o.setIdle(false)
		}
	}
	if ok, err := k.records(bt); err != nil || !ok {
		return true, err
	}
	barrier, stop, regen, eof := bt.barrier, bt.stop, bt.regen, bt.eof
	k.recycle(bt)
	if eof {
		k.eofs++
		k.ended[from] = true
	}
	if err := k.barrier(from, barrier, stop); err != nil {
		return true, err
	}
	if k.lw != nil {
		var err error
		if regen != 0 {
			err = k.lw.marker(from, regen, k.ended)
		} else if eof {
			err = k.lw.progress(k.ended)
		}
		if err := k.resumeWM(err); err != nil {
			return true, err
		}
	}
	if k.stopID != 0 && allStopped(k.stopped, k.ended) {
		s, err := k.snapshot(k.stopID, true)
		if err != nil {
			return true, err
		}
		k.submit(k.stopID, &s, 0)
		k.m.busy.Add(uint64(time.Since(t0)))
		return true, nil
	}
	if k.eofs == k.e.senders {
		return true, k.finish(t0)
	}
	if wm, ok := k.tr.Advance(now); ok {
		if err := k.setWM(wm); err != nil {
			return true, err
		}
	}
	k.status()
	for _, o := range k.outs {
		o.flushIdle()
	}
	k.m.busy.Add(uint64(time.Since(t0)))
	return false, nil
}

// records charges and processes a batch's records; ok is false when the
// context ended while the cost was charged. Records of key groups whose
// state is on its way to this worker are held back (live rescaling):
// taken and charged now, processed once the state is in.
func (k *worker[In]) records(bt *batch[In]) (ok bool, err error) {
	n := len(bt.ev)
	if n == 0 {
		return true, nil
	}
	ev, keys := bt.ev, bt.keys
	if k.lw != nil {
		ev, keys = k.lw.filter(int(bt.from), ev, keys)
	}
	if k.fault != nil {
		k.taken += uint64(n)
		if err := k.fault(k.b.name, k.w, k.taken); err != nil {
			return false, err
		}
	}
	k.m.in.Add(uint64(n))
	for _, o := range k.outs {
		o.setIngest(bt.ingest)
	}
	ok, late := k.srv.charge(k.ctx, n, k.j.start.Add(time.Duration(bt.sent)), time.Duration(k.m.waitOut.Load()))
	if !ok {
		return false, nil
	}
	if late > 0 && len(k.in.ch) == 0 {
		// The modelled service ended before the wait did, and nothing is
		// queued: the model's server is idle.
		k.m.waitIn.Add(uint64(late))
	}
	if len(ev) > 0 {
		if err := k.h.process(ev, keys); err != nil {
			return false, err
		}
	}
	if k.idle {
		// Records taken while idle (an ending input's last batch, or one
		// an idle upstream worker sent) do not revive this worker, and
		// its receivers no longer wait for it: send what they left (a
		// partial stage's accumulators) now, still marked idle, ahead of
		// anything else this worker emits.
		k.h.idle()
		for _, o := range k.outs {
			o.flush()
		}
	}
	return true, nil
}

// recycle empties a processed batch and returns its buffer: to the
// inbox's free list, or to the aligner that took it from its sender.
func (k *worker[In]) recycle(bt *batch[In]) {
	bt.ev, bt.keys = bt.ev[:0], bt.keys[:0]
	switch {
	case !bt.local:
		k.in.free <- bt // never blocks: free holds every buffer
	case k.al != nil:
		k.al.release(bt)
	}
}

// barrier takes the checkpoint barrier id (0: none) that followed
// sender from's records: the stop checkpoint's is counted (taken once
// every input's has been processed, since nothing follows it); another
// goes to the aligner, which snapshots the worker once every sender's has
// come.
func (k *worker[In]) barrier(from int, id uint64, stop bool) error {
	switch {
	case id != 0 && stop:
		if !k.stopped[from] {
			k.stopped[from], k.nstopped, k.stopID = true, k.nstopped+1, id
		}
	case id != 0 && k.al != nil:
		k.al.arrive(from, id)
	}
	if k.al != nil && k.al.aligned(k.ended) {
		id := k.al.id
		if err := k.transition(id); err != nil {
			return err
		}
		s, err := k.snapshot(id, false)
		if err != nil {
			return err
		}
		k.submit(id, &s, k.al.done())
	}
	return nil
}

// finish ends the worker at the end of all its inputs: every key group
// it gains is in, everything fires, the outputs close, and the final
// state goes to the coordinator.
func (k *worker[In]) finish(t0 time.Time) error {
	if k.lw != nil {
		if err := k.resumeWM(k.lw.finish(k.ctx, k.ended)); err != nil {
			return err
		}
	}
	if err := k.setWM(operators.EndOfInput); err != nil {
		return err
	}
	for _, o := range k.outs {
		o.close()
	}
	k.m.busy.Add(uint64(time.Since(t0)))
	if k.co == nil {
		return nil
	}
	s, err := k.state(true)
	if err != nil {
		return err
	}
	k.submit(0, &s, 0)
	return nil
}

// onTick steps and flushes the outputs and advances the watermark on the
// flush interval's tick.
func (k *worker[In]) onTick() error {
	for _, o := range k.outs {
		o.step()
	}
	if wm, ok := k.tr.Advance(k.j.now()); ok {
		if err := k.setWM(wm); err != nil {
			return err
		}
	}
	k.status()
	for _, o := range k.outs {
		o.flush()
	}
	return nil
}

// status tells the handler and the outputs when the worker turns idle or
// active.
func (k *worker[In]) status() {
	v := k.tr.Idle()
	if v == k.idle {
		return
	}
	k.idle = v
	if v {
		k.h.idle()
	}
	for _, o := range k.outs {
		o.setIdle(v)
	}
}

// advance applies watermark wm: the handler fires what it closes, the
// outputs carry it on.
func (k *worker[In]) advance(wm int64) error {
	err := k.h.advance(wm)
	k.m.setWatermark(wm)
	for _, o := range k.outs {
		o.setWatermark(wm)
	}
	return err
}

// setWM advances to wm, or holds it while a key group's state is on its
// way.
func (k *worker[In]) setWM(wm int64) error {
	if k.lw != nil && k.lw.holding() {
		k.heldWM, k.holdingWM = wm, true
		return nil
	}
	return k.advance(wm)
}

// resumeWM applies the watermark held during a move once the move is
// done; err is the move step's.
func (k *worker[In]) resumeWM(err error) error {
	if err != nil || !k.holdingWM || k.lw.holding() {
		return err
	}
	k.holdingWM = false
	return k.advance(k.heldWM)
}

// state serializes the worker's state, for a checkpoint or (final) when
// it ends.
func (k *worker[In]) state(final bool) (workerSnapshot, error) {
	for _, o := range k.outs {
		o.publish()
	}
	m := k.m
	s := workerSnapshot{ended: final, in: m.in.Load(), out: m.out.Load(), late: m.late.Load(), sendersEnded: slices.Clone(k.ended)}
	if k.e.spec.keyGroups {
		lo, hi := keyGroupRange(k.e.maxPar, k.b.cfg.parallelism, k.w)
		s.groups = []uint64{uint64(k.e.maxPar), uint64(lo), uint64(hi)}
	}
	s.tracker = k.tr.AppendState(nil)
	var err error
	if s.hand, err = k.h.appendState(nil); err != nil {
		return s, err
	}
	for _, o := range k.outs {
		st, err := o.appendState(nil)
		if err != nil {
			return s, err
		}
		s.outs = append(s.outs, st)
	}
	return s, nil
}

// snapshot takes the state for checkpoint id and passes the barrier on
// (the stop checkpoint's when stop is set).
func (k *worker[In]) snapshot(id uint64, stop bool) (workerSnapshot, error) {
	s, err := k.state(false)
	if err != nil {
		return s, err
	}
	for _, o := range k.outs {
		o.barrier(id, stop)
	}
	return s, nil
}

// submit hands the snapshot for checkpoint id (0: the final state) to the
// coordinator; align is the time the barriers took to align.
func (k *worker[In]) submit(id uint64, s *workerSnapshot, align time.Duration) {
	k.m.inflight.Add(uint64(len(s.inflight)))
	k.co.submit(ack{id: id, stage: k.b.index, worker: k.w, final: s.ended, data: s.appendBinary(nil), txn: txnOf(k.b, s.hand), align: align, done: snapshotDone(k.h)})
}
