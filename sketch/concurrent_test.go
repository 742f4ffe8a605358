package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/stretchr/testify/require"
)

// concurrentWriters is how many goroutines the concurrent tests update
// from: more than the shards, so that shards are shared.
const concurrentWriters = 8

// withShards sets GOMAXPROCS, hence the shards of the wrappers built next,
// to n for the test's duration: the tests merge several shards whatever
// the machine.
func withShards(t *testing.T, n int) {
	old := goruntime.GOMAXPROCS(n)
	t.Cleanup(func() { goruntime.GOMAXPROCS(old) })
}

// bothModes runs f with wrappers as built (spread on their first
// collision, which a test cannot count on) and spread from the start, so
// that merges of several shards are always tested: f calls spread on each
// wrapper it builds.
func bothModes(t *testing.T, f func(t *testing.T, spread func(*atomic.Bool))) {
	t.Run("spread=on-collision", func(t *testing.T) { f(t, func(*atomic.Bool) {}) })
	t.Run("spread=always", func(t *testing.T) { f(t, func(b *atomic.Bool) { b.Store(true) }) })
}

// writeAll runs add(g, i) for every i in [0, n) split over
// concurrentWriters goroutines (goroutine g takes i ≡ g mod writers) and
// returns once all are done.
func writeAll(n int, add func(i int)) {
	var wg sync.WaitGroup
	for g := range concurrentWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += concurrentWriters {
				add(i)
			}
		}()
	}
	wg.Wait()
}

// TestConcurrentHyperLogLogEqualsSerial: hashes added from many goroutines
// give the sketch one HyperLogLog fed them all gives (merges are exact),
// whatever the interleaving: the same estimate and the same encoding.
func TestConcurrentHyperLogLogEqualsSerial(t *testing.T) {
	withShards(t, 4)
	bothModes(t, func(t *testing.T, spread func(*atomic.Bool)) {
		for _, n := range []int{0, 100, 5000, 200_000} {
			c, err := NewConcurrentHyperLogLog(12)
			require.NoError(t, err)
			spread(&c.sh.spread)
			serial, err := NewHyperLogLog(12)
			require.NoError(t, err)
			for i := range n {
				serial.AddHash(hashx.Mix64(uint64(i % 60_000)))
			}
			writeAll(n, func(i int) {
				if i%2 == 0 {
					c.AddHash(hashx.Mix64(uint64(i % 60_000)))
				} else {
					c.AddHashes([]uint64{hashx.Mix64(uint64(i % 60_000))})
				}
			})
			require.Equal(t, serial.Estimate(), c.Estimate(), "n=%d", n)
			got, err := c.Snapshot().MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, hllStateBytes(t, serial), got, "n=%d: the state, with no martingale after the snapshot's merges", n)
		}
	})
}

// TestConcurrentCountMinBound: counts added from many goroutines are
// never undercounted, and each estimate is at most that of one sketch fed
// every update, which Snapshot equals exactly.
func TestConcurrentCountMinBound(t *testing.T) {
	withShards(t, 4)
	bothModes(t, func(t *testing.T, spread func(*atomic.Bool)) {
		c, err := NewConcurrentCountMin(0.01, 0.01)
		require.NoError(t, err)
		spread(&c.sh.spread)
		serial, err := NewCountMin(0.01, 0.01)
		require.NoError(t, err)
		const n = 100_000
		key := func(i int) uint64 { return hashx.Mix64(uint64(i*i) % 997) }
		exact := map[uint64]uint64{}
		for i := range n {
			serial.AddHash(key(i), uint64(1+i%3))
			exact[key(i)] += uint64(1 + i%3)
		}
		writeAll(n, func(i int) { c.AddHash(key(i), uint64(1+i%3)) })
		require.Equal(t, serial.Total(), c.Total())
		for k, e := range exact {
			est := c.EstimateHash(k)
			require.GreaterOrEqual(t, est, e)
			require.LessOrEqual(t, est, serial.EstimateHash(k))
		}
		want, err := serial.MarshalBinary()
		require.NoError(t, err)
		got, err := c.Snapshot().MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, want, got)
		c.AddString("x", 2)
		require.GreaterOrEqual(t, c.EstimateString("x"), uint64(2))
	})
}

// TestConcurrentDDSketchEqualsSerial: values added from many goroutines
// give exactly the quantiles of one DDSketch fed them all.
func TestConcurrentDDSketchEqualsSerial(t *testing.T) {
	withShards(t, 4)
	bothModes(t, func(t *testing.T, spread func(*atomic.Bool)) {
		c, err := NewConcurrentDDSketch(0.01, 2048)
		require.NoError(t, err)
		spread(&c.sh.spread)
		serial, err := NewDDSketch(0.01, 2048)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(1, 2))
		vals := make([]float64, 50_000)
		for i := range vals {
			vals[i] = r.ExpFloat64() - 0.1 // some negative
			require.NoError(t, serial.Add(vals[i]))
		}
		writeAll(len(vals), func(i int) { _ = c.Add(vals[i]) }) // N below checks that each was added
		qs := []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1}
		want, err := serial.Quantiles(qs...)
		require.NoError(t, err)
		got, err := c.Quantiles(qs...)
		require.NoError(t, err)
		require.Equal(t, want, got)
		p99, err := c.Quantile(0.99)
		require.NoError(t, err)
		require.Equal(t, want[5], p99)
		require.Equal(t, uint64(len(vals)), c.N())
		require.ErrorIs(t, c.Add(math.Inf(1)), ErrInvalidParameter)
		require.Equal(t, uint64(len(vals)), c.N(), "a refused value adds nothing")
	})
}

// TestConcurrentReadsDuringUpdates: reads while writers run see a count
// that never goes back, never exceeds what was started and, once the
// writers are done, is the total: each read reflects a set of completed
// updates.
func TestConcurrentReadsDuringUpdates(t *testing.T) {
	withShards(t, 4)
	bothModes(t, func(t *testing.T, spread func(*atomic.Bool)) {
		c, err := NewConcurrentDDSketch(0.01, 2048)
		require.NoError(t, err)
		cm, err := NewConcurrentCountMin(0.01, 0.01)
		require.NoError(t, err)
		spread(&c.sh.spread)
		spread(&cm.sh.spread)
		const n = 40_000
		done := make(chan struct{})
		var readErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last, lastEst uint64
			for {
				select {
				case <-done:
					return
				default:
				}
				got, est := c.N(), cm.EstimateHash(7)
				if got < last || got > n || est < lastEst || est > n {
					readErr = fmt.Errorf("read went back or past the total: N %d after %d, estimate %d after %d", got, last, est, lastEst)
					return
				}
				last, lastEst = got, est
			}
		}()
		writeAll(n, func(i int) {
			_ = c.Add(float64(i + 1))
			cm.AddHash(7, 1)
		})
		close(done)
		wg.Wait()
		require.NoError(t, readErr)
		require.Equal(t, uint64(n), c.N())
		require.Equal(t, uint64(n), cm.EstimateHash(7))
	})
}

// TestConcurrentSpreadsOnCollision pins the switch to per-P shards: updates
// from one goroutine stay on shard 0, and an update that finds shard 0
// locked spreads the wrapper, waits for a shard and is counted.
func TestConcurrentSpreadsOnCollision(t *testing.T) {
	withShards(t, 4)
	c, err := NewConcurrentHyperLogLog(12)
	require.NoError(t, err)
	for i := range 1000 {
		c.AddHash(hashx.Mix64(uint64(i)))
	}
	require.False(t, c.sh.spread.Load())
	for i := 1; i < len(c.sh.shards); i++ {
		require.Zero(t, c.sh.shards[i].s.Estimate(), "shard %d unused", i)
	}
	c.sh.shards[0].mu.Lock() // as a concurrent update would hold it
	done := make(chan struct{})
	go func() {
		c.AddHash(hashx.Mix64(5000))
		close(done)
	}()
	for !c.sh.spread.Load() {
		goruntime.Gosched()
	}
	c.sh.shards[0].mu.Unlock() // the update may have been handed shard 0
	<-done
	require.Equal(t, uint64(1001), c.Estimate())
}

// TestConcurrentUpdateAllocs: updates allocate nothing once the shards
// have grown (HyperLogLog dense, DDSketch's window over the values),
// before and after the wrappers spread.
func TestConcurrentUpdateAllocs(t *testing.T) {
	h, err := NewConcurrentHyperLogLog(10)
	require.NoError(t, err)
	cm, err := NewConcurrentCountMin(0.01, 0.01)
	require.NoError(t, err)
	dd, err := NewConcurrentDDSketch(0.01, 2048)
	require.NoError(t, err)
	for i := range 100_000 {
		h.AddHash(hashx.Mix64(uint64(i)))
		_ = dd.Add(float64(1 + i%1000))
	}
	i := 0
	update := func() {
		i++
		h.AddHash(hashx.Mix64(uint64(i)))
		cm.AddHash(uint64(i), 1)
		_ = dd.Add(float64(1 + i%1000))
	}
	require.Zero(t, testing.AllocsPerRun(1000, update))
	h.sh.spread.Store(true)
	cm.sh.spread.Store(true)
	dd.sh.spread.Store(true)
	for range 100_000 { // fill whichever shards the pool hands out
		update()
	}
	require.Zero(t, testing.AllocsPerRun(1000, update), "spread: the pool path")
}

func TestConcurrentParameters(t *testing.T) {
	_, err := NewConcurrentHyperLogLog(3)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewConcurrentCountMin(0, 0.01)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewConcurrentDDSketch(0.01, 0)
	require.ErrorIs(t, err, ErrInvalidParameter)
	withShards(t, 3)
	h := must(NewConcurrentHyperLogLog(12))
	for _, n := range []int{h.Shards(), must(NewConcurrentCountMin(0.1, 0.1)).Shards(), must(NewConcurrentDDSketch(0.1, 8)).Shards()} {
		require.Equal(t, 3, n)
	}
	h.AddString("a")
	require.Equal(t, uint64(1), h.Estimate())
	dd, err := NewConcurrentDDSketch(0.01, 2048)
	require.NoError(t, err)
	_, err = dd.Quantile(0.5)
	require.ErrorIs(t, err, ErrEmpty)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
