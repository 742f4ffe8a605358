package datasets

import (
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestFillAllocatesNothing: filling a batch of 1024 records allocates
// nothing for any generator, including across epoch boundaries and on the
// event-time wrapper.
func TestFillAllocatesNothing(t *testing.T) {
	const long = 1 << 40
	ok := func(s stream.Stream, err error) stream.Stream {
		require.NoError(t, err)
		return s
	}
	ft, err := LoadFreqTable(writeFile(t, "f.tsv", "a\t3\nb\t1\n"))
	require.NoError(t, err)
	exact := ok(NewExactZipf(1000, 1, 1<<20, 1)).(*ExactZipf)
	streams := map[string]stream.Stream{
		"zipf":      ok(NewZipf(1e6, 1.2, long, 1)),
		"exact":     exact,
		"drift":     ok(NewDrift(DriftConfig{K: 1e6, S: 0.8, N: long, Period: 1000, Mode: DriftRedraw})),
		"uniform":   ok(NewUniform(1e6, long, 1)),
		"constant":  ok(NewConstant(1, long)),
		"eventtime": ok(NewEventTime(ok(NewZipf(1e6, 1, long, 1)), EventTimeConfig{Rate: 1e6, MaxDelay: 1e6, LateFraction: 0.1, MaxLateness: 10})),
		"table":     ok(ft.Sample(long, 1)),
	}
	buf := make([]stream.Record, 1024)
	for name, s := range streams {
		t.Run(name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(100, func() {
				if s.Fill(buf) != len(buf) {
					exact.Reset()
				}
			})
			require.Zero(t, allocs)
		})
	}
}
