package runtime

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// batch is the unit of exchange: records, then the sender's watermark.
type batch[T any] struct {
	ev []operators.Event[T]
	// keys holds the key of each event when the sender computed them to
	// route (a keyed, partitioned edge of records other than stream.Record,
	// whose key is a field): the receiver's keyed state reads them instead
	// of calling the key function again. Empty otherwise.
	keys   []uint64
	wm     int64 // the sender's watermark after these records
	ingest int64 // ingest time of the oldest record, ns since job start
	sent   int64 // when it was queued, ns since job start
	from   int32 // sender index on this edge
	eof    bool  // the sender has ended
	// idle: the sender is idle as of this batch (every one of its inputs
	// is) and has sent everything it holds back; it declares itself active
	// again with its next batch without the flag.
	idle bool
	// barrier, when not 0, is the id of a checkpoint barrier that follows
	// this batch's records in the sender's output; stop, that it is the
	// stop checkpoint's (Job.Stop), after which the sender sends nothing.
	barrier uint64
	stop    bool
	// regen, when not 0, is a live stage's owner table that the sender
	// routes by after this batch (see live.go).
	regen uint64
	// local: the receiver's own copy (held during alignment, or replayed
	// from a snapshot), returned to its pool rather than the inbox.
	local bool
}

// inbox is one receiving worker's bounded queue and the free list of its
// batch buffers. Buffers circulate: free -> sender -> ch -> receiver ->
// free, so the steady state allocates nothing. There are at most
// queue+senders+1 buffers: at most queue in ch, one open per sender, one
// being processed, so a sender never waits on free for long (only while the
// queue is full, which is the backpressure). They are made when first
// needed, so a receiver that keeps up costs a few buffers, not its bound.
//
// Batching follows the receiver's load. A receiver whose queue is empty is
// idle, or about to be: at the end of each step of a sender (a batch
// processed, a buffer read) it gets what the sender holds for it, however
// little (outbox.flushIdle). A receiver with batches queued is busy: its
// senders fill their batches (BatchSize), or send them on the flush tick.
// A worker about to wait for input holds nothing back (outbox.flushHeld).
// The check is one read of len(ch) per receiver per step, never per
// record; a stale answer costs one partial batch, or a wait until the
// sender's next step or tick.
type inbox[T any] struct {
	ch   chan *batch[T]
	free chan *batch[T]
	m    *workerMetrics // the receiver's
	made atomic.Int32   // buffers made so far (may overshoot max: then none is made)
	max  int32
	size int
}

func newInbox[T any](queue, senders, batchSize int, m *workerMetrics) *inbox[T] {
	n := queue + senders + 1
	return &inbox[T]{ch: make(chan *batch[T], queue), free: make(chan *batch[T], n), m: m, max: int32(n), size: batchSize}
}

// get returns a free buffer, making one while fewer than max exist, else
// waiting for one (panicking stopped if ctx ends first); the sender's m,
// when not nil, counts the wait as time blocked on output.
func (in *inbox[T]) get(ctx context.Context, m *workerMetrics) *batch[T] {
	select {
	case b := <-in.free:
		return b
	default:
	}
	if in.made.Load() < in.max && in.made.Add(1) <= in.max {
		return &batch[T]{ev: make([]operators.Event[T], 0, in.size)}
	}
	t0 := time.Now()
	defer m.blockedOut(t0)
	select {
	case b := <-in.free:
		return b
	case <-ctx.Done():
		panic(stopped{})
	}
}

// stopped is panicked by a sender whose context ended while it was blocked;
// the worker's recover turns it into a clean stop.
type stopped struct{}

// edge connects a producing stream to a consuming stage.
type edge[T any] struct {
	spec    Edge
	keyOf   func(T) uint64
	recKey  bool // T is stream.Record keyed by its Key (see Stream.recKey)
	senders int
	// fromSource: the senders are a source's workers, whose silence means
	// they hold nothing back, so receivers may time them out (IdleTimeout);
	// other senders declare their idleness (batch.idle).
	fromSource bool
	// codec encodes the edge's records for unaligned checkpoints (see
	// Stream.codec); nil: its receivers align barriers.
	codec   operators.Codec[T]
	inboxes []*inbox[T]
	// offset is the index of the edge's first sender among its
	// receivers' senders: a join's right input shares its receivers'
	// inboxes with the left one, whose senders come first.
	offset int
	maxPar int        // the job's key groups (MaxParallelism)
	from   *stageBase // the sending stage
	to     *stageBase // the receiving stage
	live   *liveStage // the receiving stage's, when it rescales live
}

// outbox is one sending worker's side of an edge: its partitioner instance
// and one open batch per receiver.
type outbox[T any] struct {
	ctx    context.Context
	job    *Job
	e      *edge[T]
	part   partition.Partitioner // nil: broadcast
	fwd    int                   // the receiver of a forward edge, else -1
	from   int32
	cur    []*batch[T]
	sentWM []int64
	// idle is the sender's status; sentIdle[i] the last sent to receiver i.
	idle     bool
	sentIdle []bool
	size     int
	keyed    bool // batches carry keys (see batch.keys)
	m        *workerMetrics
	ingest   *int64
	mark     uint64 // the barrier the batches being sent carry (see barrier)
	stop     bool   // ... and whether it is the stop checkpoint's
	regen    uint64 // the owner table the batches being sent announce (see step)
	// fan is a skew-aware join's table on its broadcast input: a hot
	// key's record goes to each of its candidates.
	fan *skewTable
	// hot reports the partitioner's hot keys (nil: it has no detector).
	hot *hotReport
}

func newOutbox[T any](ctx context.Context, e *edge[T], from int, batchSize int, m *workerMetrics, ingest *int64) (*outbox[T], error) {
	o := &outbox[T]{ctx: ctx, e: e, from: int32(e.offset + from), cur: make([]*batch[T], len(e.inboxes)),
		sentWM: make([]int64, len(e.inboxes)), sentIdle: make([]bool, len(e.inboxes)), size: batchSize, m: m, ingest: ingest}
	for i := range o.sentWM {
		o.sentWM[i] = operators.NoWatermark
	}
	var p partition.Partitioner
	var err error
	if e.live != nil {
		p = &liveRouter{t: e.live.first, n: len(e.inboxes)}
	} else if p, err = e.spec.partitioner(from, e.senders, len(e.inboxes), e.maxPar); err != nil {
		return nil, err
	}
	o.part, o.fwd = p, -1
	if f, ok := p.(forward); ok {
		o.fwd = f.w
	}
	o.keyed = o.fwd < 0 && p != nil && e.keyOf != nil && !e.recKey
	if e.spec.fan {
		o.fan = e.spec.skew
		if e.spec.moves != nil {
			o.fan = e.spec.moves.start
		}
	}
	if hr, ok := p.(partition.HeadReporter); ok {
		o.hot = &hotReport{head: hr, worker: from}
	}
	return o, nil
}

func (o *outbox[T]) put(ev operators.Event[T], wm int64) {
	if o.fwd >= 0 {
		o.append(o.fwd, ev, wm)
		return
	}
	if o.part == nil {
		for i := range o.cur {
			o.append(i, ev, wm)
		}
		return
	}
	var k uint64
	if o.e.keyOf != nil {
		k = o.e.keyOf(ev.Value)
	}
	if o.fan != nil {
		if c := o.fan.candidates(k); c != nil {
			for _, w := range c {
				o.appendKeyed(int(w), ev, k, wm)
			}
			return
		}
	}
	d := o.part.Route(k)
	if o.keyed {
		o.appendKeyed(d, ev, k, wm)
		return
	}
	o.append(d, ev, wm)
}

// appendKeyed is append for a keyed outbox: the event and its key.
func (o *outbox[T]) appendKeyed(i int, ev operators.Event[T], k uint64, wm int64) {
	b := o.cur[i]
	if b == nil {
		b = o.open(i)
	}
	b.ev = append(b.ev, ev)
	b.keys = append(b.keys, k)
	if len(b.ev) == o.size {
		o.send(i, wm, false)
	}
}

func (o *outbox[T]) append(i int, ev operators.Event[T], wm int64) {
	b := o.cur[i]
	if b == nil {
		b = o.open(i)
	}
	b.ev = append(b.ev, ev)
	if len(b.ev) == o.size {
		o.send(i, wm, false)
	}
}

func (o *outbox[T]) open(i int) *batch[T] {
	b := o.e.inboxes[i].get(o.ctx, o.m)
	b.ev, b.keys, b.eof = b.ev[:0], b.keys[:0], false
	b.ingest = *o.ingest // the oldest record's: the batch opens for it
	o.cur[i] = b
	return b
}

func (o *outbox[T]) send(i int, wm int64, eof bool) {
	b := o.cur[i]
	if b == nil {
		b = o.open(i)
	}
	o.cur[i] = nil
	b.wm, b.from, b.eof, b.idle, b.barrier, b.stop, b.regen = wm, o.from, eof, o.idle, o.mark, o.stop, o.regen
	if o.job != nil {
		b.sent = o.job.now()
	}
	o.sentWM[i], o.sentIdle[i] = wm, o.idle
	in := o.e.inboxes[i]
	ch := in.ch
	select {
	case ch <- b:
	default:
		t0 := time.Now()
		select {
		case ch <- b:
		case <-o.ctx.Done():
			panic(stopped{})
		}
		o.m.blockedOut(t0)
	}
	in.m.observeQueue(len(ch))
}

// pending reports whether receiver i has something to be told: records in
// its open batch, a watermark behind wm, or a change of idle status.
func (o *outbox[T]) pending(i int, wm int64) bool {
	b := o.cur[i]
	return (b != nil && len(b.ev) > 0) || o.sentWM[i] < wm || o.sentIdle[i] != o.idle
}

// flush sends every open batch, and an empty one to each receiver whose
// last watermark is behind wm or that has not been told the sender's idle
// status.
func (o *outbox[T]) flush(wm int64) {
	for i := range o.cur {
		if o.pending(i, wm) {
			o.send(i, wm, false)
		}
	}
}

// flushIdle is flush for the receivers whose queue is empty (idle, or
// about to be): each gets what it is pending, as a partial batch. A
// receiver with batches queued is busy and gets nothing: its batch fills.
func (o *outbox[T]) flushIdle(wm int64) {
	// A live stage's receivers that own no key group of the table this
	// sender routes by get no records, and watermarks only at the periodic
	// flush (FlushInterval), so that they do not wake at every step.
	var owns []bool
	if r, ok := o.part.(*liveRouter); ok {
		owns = r.t.owns
	}
	for i, in := range o.e.inboxes {
		if owns != nil && !owns[i] {
			continue
		}
		if len(in.ch) == 0 && o.pending(i, wm) {
			o.send(i, wm, false)
		}
	}
}

// flushHeld sends every open batch that holds records, whatever its
// receiver's load: the sender is about to wait for input, and holding them
// would only delay them.
func (o *outbox[T]) flushHeld(wm int64) {
	for i, b := range o.cur {
		if b != nil && len(b.ev) > 0 {
			o.send(i, wm, false)
		}
	}
}

// barrier sends every receiver its open batch (or an empty one) followed
// by barrier id (of the stop checkpoint when stop is set).
func (o *outbox[T]) barrier(id uint64, wm int64, stop bool) {
	o.mark, o.stop = id, stop
	for i := range o.cur {
		o.send(i, wm, false)
	}
	o.mark, o.stop = 0, false
	if m := o.e.spec.moves; m != nil && !stop {
		if t := m.at(id); t != nil {
			o.retable(t) // a moving skew-aware join's table from this barrier on
		}
	}
}

// close sends the final batches, carrying EndOfInput.
func (o *outbox[T]) close() {
	for i := range o.cur {
		o.send(i, operators.EndOfInput, true)
	}
}

// collector is what a worker emits into: every outbox of every consumer of
// its output stream.
type collector[T any] struct {
	outs   []*outbox[T]
	wm     int64
	m      *workerMetrics
	ingest int64
	count  uint64 // emitted since the last publish
}

func (c *collector[T]) emit(ev operators.Event[T]) {
	c.count++
	if len(c.outs) == 1 {
		c.outs[0].put(ev, c.wm)
		return
	}
	for _, o := range c.outs {
		o.put(ev, c.wm)
	}
}

// publish adds the emitted count to the metrics, and the hot keys of the
// outboxes' partitioners when they are due (hotReport).
func (c *collector[T]) publish() {
	if c.count > 0 {
		c.m.out.Add(c.count)
		c.count = 0
	}
	for _, o := range c.outs {
		if o.hot != nil && o.job != nil {
			o.hot.report(o.ctx, o.job, o.e.from, o.e.to, o.m)
		}
	}
}

func (c *collector[T]) flush() {
	c.publish()
	for _, o := range c.outs {
		o.flush(c.wm)
	}
}

// flushIdle publishes, then sends what it holds to every receiver with an
// empty queue (outbox.flushIdle): once per step of the worker.
func (c *collector[T]) flushIdle() {
	c.publish()
	for _, o := range c.outs {
		o.flushIdle(c.wm)
	}
}

// flushHeld sends every open batch with records (outbox.flushHeld): the
// worker is about to wait for input.
func (c *collector[T]) flushHeld() {
	for _, o := range c.outs {
		o.flushHeld(c.wm)
	}
}

func (c *collector[T]) close() {
	for _, o := range c.outs {
		if o.hot != nil {
			o.hot.due = 0 // the hot keys at the end of the input
		}
	}
	c.publish()
	c.wm = operators.EndOfInput
	for _, o := range c.outs {
		o.close()
	}
}

func (c *collector[T]) setWatermark(wm int64) {
	c.wm = wm
	c.m.setWatermark(wm)
}

func (c *collector[T]) restoreWatermark(wm int64) {
	c.wm = wm
	c.m.setWatermark(wm)
}

// barrier sends barrier id (of the stop checkpoint when stop is set)
// after everything emitted so far, on every outgoing edge to every
// receiver.
func (c *collector[T]) barrier(id uint64, stop bool) {
	c.publish()
	for _, o := range c.outs {
		o.barrier(id, c.wm, stop)
	}
}

// setIdle sets the status the next batches carry; flush tells every
// receiver of a change.
func (c *collector[T]) setIdle(idle bool) {
	for _, o := range c.outs {
		o.idle = idle
	}
}
func (c *collector[T]) setIngest(t int64) { c.ingest = t }
