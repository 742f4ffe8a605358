package sketch

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAtomicExaLogLogNew(t *testing.T) {
	for _, c := range []struct {
		t, d, p uint8
		name    string
	}{{3, 24, 8, "t = 3"}, {2, 20, 8, "d = 20"}, {2, 16, 8, "d = 16"}, {2, 24, 1, "p = 1"}, {2, 24, 25, "p = 25"}} {
		s, err := NewAtomicExaLogLog(c.t, c.d, c.p)
		require.Nil(t, s)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, c.name)
	}
	s, err := NewAtomicExaLogLog(2, 24, 9)
	require.NoError(t, err)
	tt, d, p := s.Params()
	require.Equal(t, [3]uint8{2, 24, 9}, [3]uint8{tt, d, p})
	require.Zero(t, s.Estimate())
}

// TestAtomicExaLogLogConcurrent adds overlapping parts of one stream from
// several goroutines and checks the result is the sequential sketch of
// the whole stream, register for register.
func TestAtomicExaLogLogConcurrent(t *testing.T) {
	for _, p := range []uint8{2, 6, 12} {
		hs := ellStream(1, uint64(p), 40000)
		want := ellFromHashes(t, 24, p, hs)
		s, err := NewAtomicExaLogLog(2, 24, p)
		require.NoError(t, err)
		const g = 8
		var wg sync.WaitGroup
		for w := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Goroutine w adds the hashes i with i mod g in {w, w+1}:
				// every hash twice, by two goroutines, in different orders.
				for i := range hs {
					if j := (i + g - w) % g; j == 0 || j == 1 {
						s.AddHash(hs[(i*7919)%len(hs)])
					}
				}
			}()
		}
		wg.Wait()
		got := s.Snapshot()
		require.Equal(t, want.State(), got.State(), "p=%d", p)
		require.False(t, got.MartingaleValid())
		require.Equal(t, want.Estimate(), s.Estimate())
	}
}

func TestAtomicExaLogLogAllocs(t *testing.T) {
	s, err := NewAtomicExaLogLog(2, 24, 10)
	require.NoError(t, err)
	hs := ellStream(0, 1, 1024)
	i := 0
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		s.AddHash(hs[i&1023])
		i++
	}))
	a, b := ellFromStream(t, 24, 10, 0, 1, 0), s.Snapshot()
	a.AddHash(HashString("k"))
	s.AddString("k")
	b.AddHash(HashString("k"))
	require.Equal(t, b.State(), s.Snapshot().State())
}

// BenchmarkAtomicExaLogLogAddHash is AddHash from every goroutine of
// RunParallel into one sketch of precision 14 that has seen the hashes once.
func BenchmarkAtomicExaLogLogAddHash(b *testing.B) {
	s, err := NewAtomicExaLogLog(2, 24, 14)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range hllBenchHashes {
		s.AddHash(h)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.AddHash(hllBenchHashes[i&(hllBenchKeys-1)])
			i += 7
		}
	})
}
