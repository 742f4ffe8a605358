package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func TestHotPathAllocs(t *testing.T) {
	t.Run("LatencyRecorder.Record", func(t *testing.T) {
		r, err := NewLatencyRecorder(time.Second)
		require.NoError(t, err)
		r.Record(0, time.Millisecond) // the first slot exists
		allocs := testing.AllocsPerRun(1000, func() { r.Record(500*time.Millisecond, 3*time.Millisecond) })
		require.Zero(t, allocs)
	})
	t.Run("generator to source", func(t *testing.T) {
		// Steady state: the generator recycles its batches and the source
		// copies them into the runtime's buffer; neither allocates.
		const n = 1 << 16
		g, err := NewGenerator(stream.FromKeys(keys(n)), GeneratorConfig{Batch: 64, Limit: n, Queue: 64}, &fakeClock{}, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx) }()
		src := &genSource{g: g}
		dst := make([]stream.Record, 64)
		allocs := testing.AllocsPerRun(200, func() {
			if src.Fill(dst) != len(dst) {
				t.Fatal("stream ended early")
			}
		})
		require.Zero(t, allocs)
		cancel()
		for b := g.Next(); b != nil; b = g.Next() {
			g.Release(b)
		}
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestGenSourceAfterEnd(t *testing.T) {
	g, err := NewGenerator(stream.FromKeys(keys(10)), GeneratorConfig{Batch: 4, Limit: 10, Queue: 64}, &fakeClock{}, 0)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	src := &genSource{g: g}
	dst := make([]stream.Record, 8)
	require.Equal(t, 8, src.Fill(dst))
	require.Equal(t, 2, src.Fill(dst), "fewer only at the end")
	require.Equal(t, uint64(10), dst[1].Key)
	require.Equal(t, 0, src.Fill(dst), "0 once ended, however often asked")
	require.Equal(t, 0, src.Fill(dst))
	require.NoError(t, <-done)
}

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	report, clear := ProgressLine(&b, 0)
	clear() // nothing shown yet: nothing to clear
	require.Empty(t, b.String())
	report("hash: 100 tuples")
	report("hash: 200 tuples")
	clear()
	require.Equal(t, "\r\x1b[Khash: 100 tuples\r\x1b[Khash: 200 tuples\r\x1b[K", b.String())
	require.False(t, IsTerminal(&b))
	require.False(t, strings.Contains(b.String(), "\n"), "one line, rewritten in place")

	b.Reset()
	report, clear = ProgressLine(&b, time.Hour)
	report("first")
	report("dropped: within the hour")
	clear()
	require.Equal(t, "\r\x1b[Kfirst\r\x1b[K", b.String())
}
