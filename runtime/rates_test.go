package runtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/runtime/autoscale"
)

// TestRatesOf pins the rates of a stage between two metrics snapshots:
// each worker's records in and out over the interval and its useful time
// (the interval less its waits), a worker new since the first snapshot
// counted from zero, other stages left out.
func TestRatesOf(t *testing.T) {
	before := []WorkerStats{{Stage: "count", Worker: 0, In: 100, Out: 1, WaitInput: time.Second}}
	after := []WorkerStats{
		{Stage: "count", Worker: 0, In: 1100, Out: 11, WaitInput: 1500 * time.Millisecond, WaitOutput: 250 * time.Millisecond},
		{Stage: "count", Worker: 1, In: 500, WaitInput: 0},
		{Stage: "sink", Worker: 0, In: 7},
	}
	r := RatesOf(before, after, time.Second, "count")
	require.Equal(t, time.Second, r.Elapsed)
	require.Equal(t, []autoscale.Instance{{In: 1000, Out: 10, Useful: 250 * time.Millisecond}, {In: 500, Useful: time.Second}}, r.Instances)
}
