package bench

import (
	"context"
	"testing"
	"time"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func keys(n int) []uint64 {
	k := make([]uint64, n)
	for i := range k {
		k[i] = uint64(i + 1)
	}
	return k
}

// drain runs g to completion, consuming batches as a source would, and
// returns every record in order.
func drain(t *testing.T, g *Generator) []stream.Record {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- g.Run(context.Background()) }()
	var got []stream.Record
	for b := g.Next(); b != nil; b = g.Next() {
		got = append(got, b...)
		g.Release(b)
	}
	require.NoError(t, <-errc)
	return got
}

func TestGeneratorSchedule(t *testing.T) {
	const epoch = int64(1_700_000_000_000_000_000)
	t.Run("rate 1000/s stamps record i at i ms", func(t *testing.T) {
		clk := &fakeClock{}
		g, err := NewGenerator(stream.FromKeys(keys(2500)), GeneratorConfig{Rate: 1000, Batch: 64, Limit: 2000, Queue: 64}, clk, epoch)
		require.NoError(t, err)
		require.Equal(t, 1, g.BatchSize(), "100 µs of schedule holds less than one record at 1000/s: batches of one")
		got := drain(t, g)
		require.Len(t, got, 2000)
		for i, r := range got {
			require.Equal(t, uint64(i+1), r.Key)
			require.Equal(t, epoch+int64(i)*int64(time.Millisecond), r.Time)
		}
		require.EqualValues(t, 2000, g.Sent())
		require.Equal(t, 1999*time.Millisecond, clk.Now(), "the generator waits for each record's time")
	})
	t.Run("high rate batches at most 100 µs of schedule", func(t *testing.T) {
		clk := &fakeClock{}
		g, err := NewGenerator(stream.FromKeys(keys(10000)), GeneratorConfig{Rate: 1e6, Batch: 4096, Limit: 10000, Queue: 64}, clk, 0)
		require.NoError(t, err)
		require.Equal(t, 100, g.BatchSize())
		got := drain(t, g)
		require.Len(t, got, 10000)
		require.Equal(t, int64(9999*time.Microsecond), got[9999].Time)
	})
	t.Run("duration cuts the schedule", func(t *testing.T) {
		clk := &fakeClock{}
		g, err := NewGenerator(stream.FromKeys(keys(100000)), GeneratorConfig{Rate: 10000, Batch: 16, Duration: 500 * time.Millisecond, Queue: 64}, clk, 0)
		require.NoError(t, err)
		got := drain(t, g)
		require.Len(t, got, 5000)
		require.Less(t, got[len(got)-1].Time, int64(500*time.Millisecond))
	})
	t.Run("stream end", func(t *testing.T) {
		g, err := NewGenerator(stream.FromKeys(keys(77)), GeneratorConfig{Batch: 10, Limit: 1000, Queue: 64}, &fakeClock{}, 0)
		require.NoError(t, err)
		require.False(t, g.Stamp())
		got := drain(t, g)
		require.Len(t, got, 77)
		require.Zero(t, got[5].Time, "at rate 0 the taking source stamps")
	})
	t.Run("a slow system does not move the schedule", func(t *testing.T) {
		clk := &fakeClock{}
		g, err := NewGenerator(stream.FromKeys(keys(300)), GeneratorConfig{Rate: 1000, Batch: 1, Limit: 300, Queue: 1}, clk, 0)
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() { errc <- g.Run(context.Background()) }()
		var got []stream.Record
		for b := g.Next(); b != nil; b = g.Next() {
			got = append(got, b...)
			g.Release(b)
			clk.advance(3 * time.Millisecond) // the system takes 3 ms per record
		}
		require.NoError(t, <-errc)
		require.Len(t, got, 300)
		for i, r := range got {
			require.Equal(t, int64(i)*int64(time.Millisecond), r.Time)
		}
		require.Greater(t, g.Behind(), 100*time.Millisecond)
	})
	t.Run("cancel", func(t *testing.T) {
		g, err := NewGenerator(stream.FromKeys(keys(1000)), GeneratorConfig{Batch: 1, Limit: 1000, Queue: 1}, &fakeClock{}, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- g.Run(ctx) }()
		require.NotNil(t, g.Next())
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
	})
	t.Run("cancel while waiting for the schedule", func(t *testing.T) {
		// At 0.001 records/s the second record is due 1000 s after the
		// first; cancelling ends the wait and closes the queue.
		g, err := NewGenerator(stream.FromKeys(keys(1000)), GeneratorConfig{Rate: 0.001, Batch: 512, Limit: 1000, Queue: 64}, stoppedClock{}, 0)
		require.NoError(t, err)
		require.Equal(t, 1, g.BatchSize())
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- g.Run(ctx) }()
		b := g.Next()
		require.Len(t, b, 1, "the first record is due at once")
		g.Release(b)
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		require.Nil(t, g.Next(), "the queue is closed: sources see the end")
		require.EqualValues(t, 1, g.Sent())
	})
}

func TestGeneratorConfigErrors(t *testing.T) {
	s := stream.FromKeys(keys(1))
	for name, cfg := range map[string]GeneratorConfig{
		"-rate":     {Rate: -1, Batch: 1, Limit: 1, Queue: 1},
		"-batch":    {Batch: 0, Limit: 1, Queue: 1},
		"-tuples":   {Batch: 1, Queue: 1},
		"-duration": {Batch: 1, Duration: -time.Second, Queue: 1},
		"queue":     {Batch: 1, Limit: 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewGenerator(s, cfg, &fakeClock{}, 0)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, name)
		})
	}
}
