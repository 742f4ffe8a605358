package operators

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimerQueueMatchesSorted pushes timers nearly in order (jittered, as
// session timers come) and fully at random, interleaved with pops, and
// checks every pop against a sorted model.
func TestTimerQueueMatchesSorted(t *testing.T) {
	for _, jitter := range []int64{0, 5, 1 << 40} {
		t.Run(fmt.Sprintf("jitter=%d", jitter), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(jitter), 1))
			var q timerQueue
			var model []timer
			now := int64(0)
			for range 20_000 {
				if r.IntN(20) < 11 || len(model) == 0 { // 55% pushes: the queue grows to about 2,000
					now += r.Int64N(3)
					x := timer{at: now, idx: int32(r.IntN(100))}
					if jitter > 0 {
						x.at += r.Int64N(jitter) - jitter/2
					}
					q.push(x)
					i, _ := slices.BinarySearchFunc(model, x, func(a, b timer) int {
						if a.before(b) {
							return -1
						}
						if b.before(a) {
							return 1
						}
						return 0
					})
					model = slices.Insert(model, i, x)
					continue
				}
				top, ok := q.peek()
				require.True(t, ok)
				require.Equal(t, model[0].at, top.at)
				got := q.pop()
				require.Equal(t, model[0].at, got.at)
				require.Equal(t, model[0].idx, got.idx)
				model = model[1:]
				require.Equal(t, len(model), q.len())
			}
			for len(model) > 0 {
				got := q.pop()
				require.Equal(t, model[0].at, got.at)
				model = model[1:]
			}
			_, ok := q.peek()
			require.False(t, ok)
		})
	}
}
