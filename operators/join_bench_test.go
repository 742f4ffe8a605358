package operators

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// joinChurn feeds a join rounds of records over keys (each key's left and
// right records a few time units apart), advancing the watermark past
// each round so that its state expires and the next round reuses it. It
// returns the number of pairs.
type joinChurn struct {
	j    JoinState[jrec, jrec, jpair]
	keys uint64
	now  int64
	out  []Joined[jpair]
}

func (c *joinChurn) round(perKey int) int {
	pairs := 0
	for i := range perKey {
		for k := range c.keys {
			t := c.now + int64(i)
			c.out, _ = c.j.AddLeft(k, t, jrec{uk: uint32(k), id: int32(i)}, c.out[:0])
			pairs += len(c.out)
			c.out, _ = c.j.AddRight(k, t+1, jrec{uk: uint32(k), id: int32(i)}, c.out[:0])
			pairs += len(c.out)
		}
	}
	c.now += 1000 // past every window and bound of the round
	c.out = c.j.Advance(c.now-1, c.out[:0])
	return pairs + len(c.out)
}

func newChurn(t testing.TB, kind string, keys uint64) *joinChurn {
	t.Helper()
	var j JoinState[jrec, jrec, jpair]
	var err error
	switch kind {
	case "window":
		var win Windows
		win, err = Tumbling(100)
		require.NoError(t, err)
		j, err = NewWindowJoin(testJoiner(true), win, 10)
	case "interval":
		j, err = NewIntervalJoin(testJoiner(true), -2, 3, 10)
	case "regular":
		j, err = NewRegularJoin(testJoiner(true), 5, 5, 10)
	}
	require.NoError(t, err)
	return &joinChurn{j: j, keys: keys, out: make([]Joined[jpair], 0, 1<<12)}
}

// TestJoinAddAllocs: once a join's slabs, tables and queues have grown to
// the most records it holds at once, adding records to existing keys,
// emitting their pairs into the caller's slice, firing windows and
// expiring state allocate nothing.
func TestJoinAddAllocs(t *testing.T) {
	for _, kind := range []string{"window", "interval", "regular"} {
		c := newChurn(t, kind, 500)
		for range 3 {
			require.Positive(t, c.round(4), kind) // warm-up
		}
		require.Zero(t, testing.AllocsPerRun(5, func() { c.round(4) }), kind)
		c.j.Advance(EndOfInput, nil)
		require.Zero(t, c.j.Pending(), kind)
	}
}

// benchJoin measures a join over a Zipf(1.1) stream of 10^4 keys, the two
// sides interleaved with times a few units apart and the watermark a
// bound behind, and reports records per second and pairs per record.
func benchJoin(b *testing.B, newJoin func() JoinState[jrec, jrec, jpair]) {
	const n = 200_000
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 9_999)
	keys, times := make([]uint64, n), make([]int64, n)
	for i := range keys {
		keys[i] = mixHash(uint32(z.Uint64()))
		times[i] = int64(i) - r.Int64N(50)
	}
	out := make([]Joined[jpair], 0, 1<<16)
	pairs := 0
	b.ReportAllocs()
	for b.Loop() {
		j := newJoin()
		for i, k := range keys {
			rec := jrec{uk: uint32(k), id: int32(i)}
			if i%2 == 0 {
				out, _ = j.AddLeft(k, times[i], rec, out[:0])
			} else {
				out, _ = j.AddRight(k, times[i], rec, out[:0])
			}
			pairs += len(out)
			if i%256 == 255 {
				out = j.Advance(int64(i)-100, out[:0])
				pairs += len(out)
			}
		}
		pairs += len(j.Advance(EndOfInput, out[:0]))
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
	b.ReportMetric(float64(pairs)/float64(n)/float64(b.N), "pairs/rec")
}

func BenchmarkWindowJoin(b *testing.B) {
	win, err := Tumbling(time.Duration(1000))
	require.NoError(b, err)
	benchJoin(b, func() JoinState[jrec, jrec, jpair] {
		j, err := NewWindowJoin(testJoiner(false), win, 100)
		require.NoError(b, err)
		return j
	})
}

func BenchmarkIntervalJoin(b *testing.B) {
	benchJoin(b, func() JoinState[jrec, jrec, jpair] {
		j, err := NewIntervalJoin(testJoiner(false), -500, 500, 100)
		require.NoError(b, err)
		return j
	})
}

func BenchmarkRegularJoin(b *testing.B) {
	benchJoin(b, func() JoinState[jrec, jrec, jpair] {
		j, err := NewRegularJoin(testJoiner(false), 500, 500, 100)
		require.NoError(b, err)
		return j
	})
}
