package kafkabench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestServiceModel pins the modelled service on a synctest clock: a
// poll's records are served back to back at cost each before the next
// poll, an idle server starts on a poll's records when they arrive, only
// the input's polled records count, a wait's late wake-up within a poll
// is carried and that of a poll's last wait is idle time, and a poll whose
// records were skipped is served with the next one's.
func TestServiceModel(t *testing.T) {
	const cost = 100 * time.Microsecond
	type model = serviceModel[[]byte]
	// poll is what the client's hook sees of a poll of n input records.
	poll := func(m *model, n int) {
		for range n {
			m.OnFetchRecordUnbuffered(&kgo.Record{Topic: "in"}, true)
		}
	}
	decode := func(t *testing.T, m *model, n int) {
		t.Helper()
		for range n {
			v, err := m.Decode([]byte("x"))
			require.NoError(t, err)
			require.Equal(t, []byte("x"), v)
		}
	}
	newModel := func(late time.Duration) *model {
		m := newServiceModel[[]byte](context.Background(), operators.BytesCodec{}, "in", cost)
		m.sleep = func(d time.Duration) { time.Sleep(d + late) }
		return m
	}

	t.Run("polls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newModel(0)
			require.Equal(t, 2, m.per, "a wait serves 200 µs")
			start := time.Now()
			poll(m, 1000)
			m.OnFetchRecordUnbuffered(&kgo.Record{Topic: "control"}, true) // another topic
			m.OnFetchRecordUnbuffered(&kgo.Record{Topic: "in"}, false)     // dropped, not polled
			decode(t, m, 1000)
			require.Equal(t, 1000*cost, time.Since(start), "served back to back")

			time.Sleep(time.Second) // idle
			poll(m, 3)
			arrived := time.Now()
			decode(t, m, 3)
			require.Equal(t, 3*cost, time.Since(arrived), "service starts on arrival and ends with the poll")
			require.Zero(t, m.Idle())
		})
	})

	t.Run("late wake-ups", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const late = 10 * time.Microsecond
			m := newModel(late)
			start := time.Now()
			poll(m, 1000)
			decode(t, m, 1000)
			// 500 waits, each 10 µs late: the next deadline absorbs each
			// but the poll's last.
			require.Equal(t, 1000*cost+late, time.Since(start))
			require.Equal(t, late, m.Idle())
		})
	})

	t.Run("skipped records", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := newModel(0)
			poll(m, 4)
			start := time.Now()
			decode(t, m, 3) // the fourth was skipped: one record owed
			require.Equal(t, 2*cost, time.Since(start))
			poll(m, 2)
			decode(t, m, 2)
			require.Equal(t, 5*cost, time.Since(start), "the owed record first, then these two")
		})
	})
}
