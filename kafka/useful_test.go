package kafka

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/sketch"
)

// TestStatsTimesAndHotKeys runs a job to its end and checks what its
// stages measured for the true rates: every record counted once, the
// waits within the elapsed time and frozen once Run returned, the merge
// stage's records at least its partials, and the workers' hot-key
// summaries against the exact sampled counts, read back from the input
// topic (a record is sampled when the hash of its offset is 0 mod 16).
func TestStatsTimesAndHotKeys(t *testing.T) {
	recs := testkit.ZipfRecords(3, 6000, 1.2, 1000, time.Millisecond, 0)
	tc := newTestCluster(t, 12, 4, 2)
	got, _, j := runStableJob(t, tc, ProducerConfig{Partitioner: "hash"}, recs)
	require.Equal(t, testkit.ExactCounts[WindowKey](recs, tc.cfg.Windows), got)

	exact := map[uint64]uint64{} // sampled records per key hash
	var sampled uint64
	countRecords(t, testContext(t), tc.cfg, tc.cfg.Input, 12, func(r *kgo.Record) bool {
		if hashx.Mix64(uint64(r.Offset))%hotKeySample == 0 {
			exact[KeyHash(r.Key)]++
			sampled++
		}
		return true
	})
	var top uint64
	for k, c := range exact {
		if c > exact[top] {
			top = k
		}
	}

	var records int64
	var seen uint64
	topListed := false
	for i, w := range j.workers {
		s := w.Stats()
		records += s.Records
		seen += s.Sampled
		require.Positive(t, s.Elapsed, "worker %d", i)
		require.Positive(t, s.WaitInput, "worker %d polled before the stream", i)
		require.LessOrEqual(t, s.WaitInput+s.WaitOutput, s.Elapsed, "worker %d", i)
		require.Equal(t, s.Elapsed, w.Stats().Elapsed, "worker %d: Run returned, the clock stopped", i)
		require.LessOrEqual(t, len(s.HotKeys), hotKeysListed)
		for n, c := range s.HotKeys {
			// Hash partitioning: each key's records are on one worker.
			require.LessOrEqual(t, c.Lower(), exact[c.Key], "worker %d, key %x", i, c.Key)
			require.GreaterOrEqual(t, c.Count, exact[c.Key], "worker %d, key %x", i, c.Key)
			if n > 0 {
				require.GreaterOrEqual(t, s.HotKeys[n-1].Count, c.Count, "heaviest first")
			}
		}
		if len(s.HotKeys) > 0 && s.HotKeys[0].Key == top {
			topListed = true
		}
	}
	require.EqualValues(t, len(recs), records, "no replay: every record once")
	require.Equal(t, sampled, seen, "the workers sampled exactly the records at sampled offsets")
	require.True(t, topListed, "the hottest key leads its worker's list")

	m := j.merge.Stats()
	require.GreaterOrEqual(t, m.Records, m.Partials+m.Duplicates)
	require.Greater(t, m.Records, m.Partials, "watermarks are read too")
	require.Positive(t, m.Elapsed)
	require.LessOrEqual(t, m.WaitInput+m.WaitOutput, m.Elapsed)
	require.Positive(t, m.WaitOutput, "the merge stage flushed its results before committing")
}

// TestOutGauge pins when a stage's Produce reads the clock: never while
// the client holds fewer than MaxBufferedRecords - outSlack records, and
// around a Produce that blocks on the full buffer (the brokers hold every
// produce request here until released), whose wait goes to the time
// blocked on output.
func TestOutGauge(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	require.NoError(t, err)
	defer c.Close()
	const limit = 64
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"), kgo.MaxBufferedRecords(limit))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("warm")}).FirstErr())

	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	var clock stageClock
	g := newOutGauge(context.Background(), cl, &clock)
	require.EqualValues(t, limit, g.maxRecs)
	fails := make(chan error, 2*limit)
	b := newBatch(pos{}, func(err error) { fails <- err }, g, nil)
	produce := func() {
		b.left.Add(1)
		g.produce(cl, &kgo.Record{Value: []byte("v")}, b.promise)
	}
	for range limit - outSlack - 1 {
		produce()
	}
	require.Zero(t, clock.waitOutput.Load(), "no clock read below the margin")
	for cl.BufferedProduceRecords() < limit {
		produce() // timed, not blocked
	}
	before := clock.waitOutput.Load()
	// One more Produce blocks until the brokers acknowledge (the blocked
	// record counts in the buffer too). Should the client have found room
	// meanwhile (a request it retried), that Produce returns at once: the
	// next one is tried, until one blocks.
	var done chan struct{}
	for tries := 0; ; tries++ {
		require.Less(t, tries, 4*limit, "no Produce blocked on the full buffer")
		done = make(chan struct{})
		go func() {
			defer close(done)
			produce()
		}()
		blocked := false
		for !blocked {
			select {
			case <-done:
			default:
				blocked = cl.BufferedProduceRecords() > limit
				runtime.Gosched()
				continue
			}
			break
		}
		if blocked {
			break
		}
	}
	close(release)
	<-done
	require.NoError(t, cl.Flush(ctx))
	require.Greater(t, clock.waitOutput.Load(), before, "the blocked Produce's wait is counted")
	require.Zero(t, b.left.Load(), "every record acknowledged")
	require.Zero(t, g.recs.Load(), "every record counted out")
	require.Empty(t, fails)
}

// TestSampledCount pins the bounds a worker's hot-key list gives a key's
// sampled records: its entry's, or up to the last listed count for a key
// missing from a full list, and none for one missing from a short list.
func TestSampledCount(t *testing.T) {
	short := WorkerStats{HotKeys: []sketch.Counter[uint64]{{Key: 1, Count: 9, Err: 2}, {Key: 2, Count: 4}}}
	lo, hi := short.SampledCount(1)
	require.Equal(t, [2]uint64{7, 9}, [2]uint64{lo, hi})
	lo, hi = short.SampledCount(3)
	require.Equal(t, [2]uint64{0, 0}, [2]uint64{lo, hi}, "a short list holds every key seen")
	var full WorkerStats
	for i := range hotKeysListed {
		full.HotKeys = append(full.HotKeys, sketch.Counter[uint64]{Key: uint64(i), Count: uint64(50 - i), Err: 1})
	}
	lo, hi = full.SampledCount(100)
	require.Equal(t, [2]uint64{0, 50 - hotKeysListed + 1}, [2]uint64{lo, hi})
}

// TestStageClockPollInProgress pins that a poll in progress counts as
// waiting up to the reading, so that the difference of two readings is
// the interval's wait: a reading during a poll, another after it.
func TestStageClockPollInProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c stageClock
		c.started()
		c.pollStarted(time.Now())
		time.Sleep(300 * time.Millisecond)
		el, in, _ := c.times()
		require.Equal(t, 300*time.Millisecond, el)
		require.Equal(t, 300*time.Millisecond, in, "the poll so far")
		time.Sleep(100 * time.Millisecond)
		c.pollEnded(time.Now())
		time.Sleep(50 * time.Millisecond) // processing
		el2, in2, _ := c.times()
		require.Equal(t, 150*time.Millisecond, el2-el)
		require.Equal(t, 100*time.Millisecond, in2-in, "the rest of the poll, not its start again")
		c.stopped()
		time.Sleep(time.Second)
		el3, in3, _ := c.times()
		require.Equal(t, el2, el3, "stopped")
		require.Equal(t, in2, in3)
	})
}
