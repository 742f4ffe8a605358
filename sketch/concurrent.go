package sketch

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The concurrent wrappers share one design: GOMAXPROCS shards, each a
// sketch behind its own mutex on its own cache lines, merged on read.
// Until two updates first collide, every update goes to shard 0: one
// uncontended lock, the cost of a mutex-guarded sketch. The first update
// that finds shard 0 locked spreads the wrapper for good (as Java's
// LongAdder moves from its base to its cells): from then on an update
// takes a shard from a sync.Pool, whose per-P cache hands each processor
// the shard it used last, so that goroutines on different processors
// update different shards: the shard's lock is uncontended and its sketch
// stays in that processor's cache. The pool only suggests a shard; the
// mutex is what makes two updaters given the same one (after a goroutine
// migrated, or after a collection emptied the pool) safe.

// shardPad is the size of a shard's slot: two 64-byte lines, as adjacent
// lines are fetched in pairs on common x86 processors.
const shardPad = 128

// shard is one sketch and its lock, padded so that no two shards' locks
// share a cache line pair.
type shard[S any] struct {
	mu sync.Mutex
	s  S
	_  [shardPad - 16]byte // 16: the mutex and a pointer-sized S
}

// sharded is the shard set of a concurrent wrapper. S is a sketch pointer.
type sharded[S any] struct {
	shards []shard[S]
	spread atomic.Bool // set by the first update that found shard 0 locked
	pool   sync.Pool   // *shard[S], a per-P hint once spread
	next   atomic.Uint32
}

// built reports whether a constructor made the shards: false for the
// zero value of a wrapper.
func (c *sharded[S]) built() bool { return len(c.shards) > 0 }

// init makes GOMAXPROCS shards, each holding mk().
func (c *sharded[S]) init(mk func() S) {
	c.shards = make([]shard[S], runtime.GOMAXPROCS(0))
	for i := range c.shards {
		c.shards[i].s = mk()
	}
	n := uint32(len(c.shards))
	c.pool.New = func() any { return &c.shards[(c.next.Add(1)-1)%n] }
}

// acquire locks a shard for an update: shard 0 until the wrapper is
// spread, then usually the one this processor used last. pooled tells
// release to offer the shard back to the pool.
func (c *sharded[S]) acquire() (sh *shard[S], pooled bool) {
	if !c.spread.Load() {
		if sh := &c.shards[0]; sh.mu.TryLock() {
			return sh, false
		}
		if len(c.shards) > 1 {
			c.spread.Store(true)
		}
	}
	sh = c.pool.Get().(*shard[S])
	sh.mu.Lock()
	return sh, true
}

// release unlocks a shard acquire returned and, if it came from the pool,
// offers it back to this processor.
func (c *sharded[S]) release(sh *shard[S], pooled bool) {
	sh.mu.Unlock()
	if pooled {
		c.pool.Put(sh)
	}
}

// read calls f with every shard's sketch while it holds every shard's lock
// (taken in index order, so readers never deadlock): f sees exactly the
// updates that completed before the last lock was taken.
func (c *sharded[S]) read(f func(shards []shard[S])) {
	for i := range c.shards {
		c.shards[i].mu.Lock()
	}
	defer func() {
		for i := range c.shards {
			c.shards[i].mu.Unlock()
		}
	}()
	f(c.shards)
}

// ConcurrentHyperLogLog is a HyperLogLog that many goroutines may update
// and read at once: GOMAXPROCS (at construction) HyperLogLogs of one
// precision, each behind its own mutex, merged on read. Its estimates are
// those of one HyperLogLog fed every hash (HyperLogLog merges are exact),
// and its memory that of GOMAXPROCS of them (each starts sparse).
//
// Every method is safe for concurrent use and linearizable: an update
// takes effect at one instant within its call, and a read reflects exactly
// the updates that took effect before one instant within its call. An
// update locks one shard: shard 0 until two updates first collide, then
// usually the one its processor used last, so that updates from
// goroutines on different processors rarely contend; it does
// not allocate once its shard is dense (O(1) times). A read locks every
// shard and merges them, O(shards·2^p), and updates wait for it.
//
// It offers no martingale estimate (HyperLogLog.EstimateMartingale): the
// shards see interleaved parts of the stream, whose order their merge
// loses, so a Snapshot's MartingaleValid is false (whatever the number of
// shards) and its EstimateMartingale is its Estimate.
type ConcurrentHyperLogLog struct {
	sh sharded[*HyperLogLog]
}

// NewConcurrentHyperLogLog returns an empty concurrent HyperLogLog with
// 2^precision registers per shard, precision as for NewHyperLogLog.
func NewConcurrentHyperLogLog(precision uint8) (*ConcurrentHyperLogLog, error) {
	if _, err := NewHyperLogLog(precision); err != nil {
		return nil, err
	}
	c := &ConcurrentHyperLogLog{}
	c.sh.init(func() *HyperLogLog {
		h, _ := NewHyperLogLog(precision) // checked above
		return h
	})
	return c, nil
}

// AddHash adds a 64-bit hash.
func (c *ConcurrentHyperLogLog) AddHash(h uint64) {
	c.check()
	sh, pooled := c.sh.acquire()
	sh.s.AddHash(h)
	c.sh.release(sh, pooled)
}

// AddHashes adds every hash of hs under one lock.
func (c *ConcurrentHyperLogLog) AddHashes(hs []uint64) {
	c.check()
	sh, pooled := c.sh.acquire()
	sh.s.AddHashes(hs)
	c.sh.release(sh, pooled)
}

// AddString adds HashString(s).
func (c *ConcurrentHyperLogLog) AddString(s string) { c.AddHash(HashString(s)) }

// Estimate returns the estimated number of distinct hashes added, as
// Snapshot().Estimate().
func (c *ConcurrentHyperLogLog) Estimate() uint64 { return c.Snapshot().Estimate() }

// Snapshot returns a HyperLogLog of every hash added so far, which the
// caller owns: later updates do not change it.
func (c *ConcurrentHyperLogLog) Snapshot() *HyperLogLog {
	c.check()
	var out *HyperLogLog
	c.sh.read(func(shards []shard[*HyperLogLog]) {
		out = shards[0].s.Clone()
		for i := 1; i < len(shards); i++ {
			_ = out.Merge(shards[i].s) // one precision: cannot fail
		}
	})
	out.hip.valid = false // even with one shard: see the type's comment
	return out
}

// Shards returns the number of shards.
func (c *ConcurrentHyperLogLog) Shards() int { return len(c.sh.shards) }

// check panics on the zero value, which has no shards.
func (c *ConcurrentHyperLogLog) check() {
	if !c.sh.built() {
		panicZero("ConcurrentHyperLogLog", "NewConcurrentHyperLogLog")
	}
}

// ConcurrentCountMin is a plain Count-Min sketch that many goroutines may
// update and read at once: GOMAXPROCS (at construction) sketches of one
// shape, each behind its own mutex. An estimate is the sum of the shards'
// estimates: at least the true count, and at most the estimate of one
// sketch fed every update (the sum of row minima is at most the minimum of
// row sums), so NewCountMin's bound holds: it exceeds the true count by
// more than ε·Total with probability at most δ. Memory is GOMAXPROCS
// times that of one sketch.
//
// Every method is safe for concurrent use and linearizable: an update
// takes effect at one instant within its call, and a read reflects exactly
// the updates that took effect before one instant within its call. An
// update locks one shard: shard 0 until two updates first collide, then
// usually the one its processor used last, so that updates from
// goroutines on different processors rarely contend; it does
// not allocate. EstimateHash locks every shard, O(shards·depth); Snapshot
// merges them, O(shards·width·depth); updates wait for either.
type ConcurrentCountMin struct {
	sh sharded[*CountMin]
}

// NewConcurrentCountMin returns an empty concurrent Count-Min sketch with
// the guarantee and per-shard shape of NewCountMin(epsilon, delta).
func NewConcurrentCountMin(epsilon, delta float64) (*ConcurrentCountMin, error) {
	proto, err := NewCountMin(epsilon, delta)
	if err != nil {
		return nil, err
	}
	c := &ConcurrentCountMin{}
	c.sh.init(func() *CountMin {
		s, _ := NewCountMinSize(proto.Width(), proto.Depth()) // a valid shape
		return s
	})
	return c, nil
}

// AddHash adds n occurrences of the key with hash h.
func (c *ConcurrentCountMin) AddHash(h, n uint64) {
	c.check()
	sh, pooled := c.sh.acquire()
	sh.s.AddHash(h, n)
	c.sh.release(sh, pooled)
}

// AddHashes adds n occurrences of every hash of hs under one lock.
func (c *ConcurrentCountMin) AddHashes(hs []uint64, n uint64) {
	c.check()
	sh, pooled := c.sh.acquire()
	sh.s.AddHashes(hs, n)
	c.sh.release(sh, pooled)
}

// AddString adds n occurrences of the key s.
func (c *ConcurrentCountMin) AddString(s string, n uint64) { c.AddHash(HashString(s), n) }

// EstimateHash returns the estimated count of the key with hash h.
func (c *ConcurrentCountMin) EstimateHash(h uint64) uint64 {
	c.check()
	var est uint64
	c.sh.read(func(shards []shard[*CountMin]) {
		for i := range shards {
			est = satAdd(est, shards[i].s.EstimateHash(h))
		}
	})
	return est
}

// EstimateString returns the estimated count of the key s.
func (c *ConcurrentCountMin) EstimateString(s string) uint64 {
	return c.EstimateHash(HashString(s))
}

// Total returns the number of occurrences added.
func (c *ConcurrentCountMin) Total() uint64 {
	var n uint64
	c.sh.read(func(shards []shard[*CountMin]) {
		for i := range shards {
			n = satAdd(n, shards[i].s.Total())
		}
	})
	return n
}

// Snapshot returns the Count-Min sketch of every update so far (the
// shards merged: exactly the sketch of one sketch fed them all), which the
// caller owns. Its estimates may exceed EstimateHash's, never undercount.
func (c *ConcurrentCountMin) Snapshot() *CountMin {
	c.check()
	var out *CountMin
	c.sh.read(func(shards []shard[*CountMin]) {
		out, _ = NewCountMinSize(shards[0].s.Width(), shards[0].s.Depth())
		for i := range shards {
			_ = out.Merge(shards[i].s) // one shape: cannot fail
		}
	})
	return out
}

// Shards returns the number of shards.
func (c *ConcurrentCountMin) Shards() int { return len(c.sh.shards) }

// check panics on the zero value, which has no shards.
func (c *ConcurrentCountMin) check() {
	if !c.sh.built() {
		panicZero("ConcurrentCountMin", "NewConcurrentCountMin")
	}
}

// ConcurrentDDSketch is a DDSketch that many goroutines may update and
// read at once: GOMAXPROCS (at construction) DDSketches of one relative
// accuracy and bucket limit, each behind its own mutex, merged on read.
// DDSketch merges are exact, so its quantiles are those of one DDSketch
// fed every value: within α·|v| of v (see DDSketch). Memory is GOMAXPROCS
// times that of one sketch.
//
// Every method is safe for concurrent use and linearizable: an update
// takes effect at one instant within its call, and a read reflects exactly
// the updates that took effect before one instant within its call. An
// update locks one shard: shard 0 until two updates first collide, then
// usually the one its processor used last, so that updates from
// goroutines on different processors rarely contend; it does
// not allocate while its value's bucket lies in its shard's window. A
// read locks every shard and merges them, O(shards·maxBins); updates wait
// for it.
type ConcurrentDDSketch struct {
	sh sharded[*DDSketch]
}

// NewConcurrentDDSketch returns an empty concurrent DDSketch with the
// parameters of NewDDSketch(alpha, maxBins).
func NewConcurrentDDSketch(alpha float64, maxBins int) (*ConcurrentDDSketch, error) {
	if _, err := NewDDSketch(alpha, maxBins); err != nil {
		return nil, err
	}
	c := &ConcurrentDDSketch{}
	c.sh.init(func() *DDSketch {
		s, _ := NewDDSketch(alpha, maxBins) // checked above
		return s
	})
	return c, nil
}

// Add adds x, failing as DDSketch.Add does (adding nothing) for NaN,
// infinite or too large values.
func (c *ConcurrentDDSketch) Add(x float64) error {
	if !c.sh.built() {
		return errZero("receiver", "ConcurrentDDSketch", "NewConcurrentDDSketch")
	}
	sh, pooled := c.sh.acquire()
	err := sh.s.Add(x)
	c.sh.release(sh, pooled)
	return err
}

// Quantile returns Snapshot().Quantile(q).
func (c *ConcurrentDDSketch) Quantile(q float64) (float64, error) {
	if !c.sh.built() {
		return 0, errZero("receiver", "ConcurrentDDSketch", "NewConcurrentDDSketch")
	}
	return c.Snapshot().Quantile(q)
}

// Quantiles returns Snapshot().Quantiles(qs...).
func (c *ConcurrentDDSketch) Quantiles(qs ...float64) ([]float64, error) {
	if !c.sh.built() {
		return nil, errZero("receiver", "ConcurrentDDSketch", "NewConcurrentDDSketch")
	}
	return c.Snapshot().Quantiles(qs...)
}

// N returns the number of values added, saturating at 2^64−1.
func (c *ConcurrentDDSketch) N() uint64 {
	var n uint64
	c.sh.read(func(shards []shard[*DDSketch]) {
		for i := range shards {
			n = satAdd(n, shards[i].s.N())
		}
	})
	return n
}

// Snapshot returns the DDSketch of every value added so far, which the
// caller owns: later updates do not change it.
func (c *ConcurrentDDSketch) Snapshot() *DDSketch {
	if !c.sh.built() {
		panicZero("ConcurrentDDSketch", "NewConcurrentDDSketch")
	}
	var out *DDSketch
	c.sh.read(func(shards []shard[*DDSketch]) {
		out = shards[0].s.Clone()
		for i := 1; i < len(shards); i++ {
			_ = out.Merge(shards[i].s) // one α, mapping and limit: cannot fail
		}
	})
	return out
}

// Shards returns the number of shards.
func (c *ConcurrentDDSketch) Shards() int { return len(c.sh.shards) }
