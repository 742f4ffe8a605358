package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendHead pins HeadReporter: the partitioners with a detector
// report a key holding half the stream first, with a probability near
// 1/2, and the others do not implement it.
func TestAppendHead(t *testing.T) {
	const hot = uint64(0xfeed)
	for _, kind := range []string{"dchoices", "wchoices", "auto"} {
		t.Run(kind, func(t *testing.T) {
			f, err := NewFactory(kind)
			require.NoError(t, err)
			p, err := f(8)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 200_000 {
				k := r.Uint64()
				if i%2 == 0 {
					k = hot
				}
				p.Route(k)
			}
			hr, ok := p.(HeadReporter)
			require.True(t, ok)
			head := hr.AppendHead(nil)
			require.NotEmpty(t, head)
			require.Equal(t, hot, head[0].Key)
			require.InDelta(t, 0.5, head[0].P, 0.05)
			require.Equal(t, head, hr.AppendHead(head[:0]), "appending into its own storage")
		})
	}
	for _, kind := range []string{"hash", "shuffle", "pkg"} {
		f, err := NewFactory(kind)
		require.NoError(t, err)
		p, err := f(8)
		require.NoError(t, err)
		_, ok := p.(HeadReporter)
		require.False(t, ok, kind)
	}
}
