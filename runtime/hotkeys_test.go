package runtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestHotKeys: a source of two workers, with key 7 in half of its
// records, sends over a D-Choices edge; each source worker's stats list
// key 7 as the hot key of the edge to the count, with a share near 1/2,
// and the Debug log says when it became hot. A Hash edge lists none.
func TestHotKeys(t *testing.T) {
	const n = 40_000
	recs := make([][]stream.Record, 2)
	for w := range recs {
		for i := range n {
			k := uint64(1000 + i%5000)
			if i%2 == 0 {
				k = 7
			}
			recs[w] = append(recs[w], stream.Record{Key: k, Time: int64(i)})
		}
	}
	for _, kind := range []string{"dchoices", "hash"} {
		t.Run(kind, func(t *testing.T) {
			var buf testkit.LogBuffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			j, err := NewJob(Logger(log), BatchSize(64))
			require.NoError(t, err)
			src := Source(j, "src", []stream.Stream{stream.FromRecords(recs[0]), stream.FromRecords(recs[1])})
			edge := Hash()
			if kind != "hash" {
				edge, err = Kind(kind)
				require.NoError(t, err)
			}
			counts := WindowAggregate(KeyBy(src, func(r stream.Record) uint64 { return r.Key }), "count", operators.Count[stream.Record](),
				Window(operators.GlobalWindow()), Parallelism(4), Via(edge))
			Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
			require.NoError(t, j.Run(context.Background()))

			for _, s := range j.Metrics() {
				if s.Stage != "src" || kind == "hash" {
					require.Empty(t, s.HotKeys, "%s worker %d", s.Stage, s.Worker)
					continue
				}
				require.NotEmpty(t, s.HotKeys, "source worker %d", s.Worker)
				require.LessOrEqual(t, len(s.HotKeys), MaxHotKeys)
				top := s.HotKeys[0]
				require.Equal(t, HotKey{To: "count/partial", Key: 7, Share: top.Share}, top) // D-Choices splits keys: two phases
				require.InDelta(t, 0.5, top.Share, 0.05)
			}
			became := 0
			for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
				if rec["msg"] != "hot keys changed" {
					continue
				}
				require.Equal(t, "src", rec["stage"])
				require.Equal(t, "count/partial", rec["to"])
				if e, ok := rec["entered"].([]any); ok && len(e) > 0 && e[0] == "7" {
					became++
				}
			}
			if kind == "hash" {
				require.Zero(t, became)
			} else {
				require.Equal(t, 2, became, "key 7 became hot once per source worker")
			}
		})
	}
}
