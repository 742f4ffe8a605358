package runtime

import (
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestRateAndLatencyHook: an open-loop source stamps each record with its
// scheduled ingest time; the sink's hook sees every record, never before it
// was due.
func TestRateAndLatencyHook(t *testing.T) {
	const n, rate = 2000, 40_000.0
	j, err := NewJob(BatchSize(50), FlushInterval(time.Millisecond))
	require.NoError(t, err)
	recs := testkit.ZipfRecords(8, n, 1.2, 100, time.Microsecond, 0)
	src := Source(j, "src", split(recs, 2), Rate(rate/2))
	var mu sync.Mutex
	var seen int
	var maxIngest int64
	Sink(src, "sink", func(int, stream.Record) error { return nil }, WithLatency(func(_ int, ingest, now int64, records int) {
		mu.Lock()
		defer mu.Unlock()
		seen += records
		maxIngest = max(maxIngest, ingest)
		require.GreaterOrEqual(t, now, ingest, "a record is consumed after it is due")
	}))
	runJob(t, j)
	require.Equal(t, n, seen)
	// Each source's last batch starts at least at record n/2-50's due time.
	require.GreaterOrEqual(t, maxIngest, int64(float64(n/2-50)/(rate/2)*1e9))
}
