package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountMinParameters(t *testing.T) {
	bad := []struct {
		name  string
		build func() (*CountMin, error)
		param string
	}{
		{"epsilon=0", func() (*CountMin, error) { return NewCountMin(0, 0.1) }, "epsilon"},
		{"epsilon=1", func() (*CountMin, error) { return NewCountMin(1, 0.1) }, "epsilon"},
		{"epsilon=-0.1", func() (*CountMin, error) { return NewCountMin(-0.1, 0.1) }, "epsilon"},
		{"epsilon=NaN", func() (*CountMin, error) { return NewCountMin(math.NaN(), 0.1) }, "epsilon"},
		{"epsilon=Inf", func() (*CountMin, error) { return NewConservativeCountMin(math.Inf(1), 0.1) }, "epsilon"},
		{"epsilon=tiny", func() (*CountMin, error) { return NewCountMin(1e-12, 0.1) }, "epsilon"},
		{"epsilon*depth over cap", func() (*CountMin, error) { return NewCountMin(1e-7, 1e-9) }, "epsilon"},
		{"delta=0", func() (*CountMin, error) { return NewCountMin(0.1, 0) }, "delta"},
		{"delta=1", func() (*CountMin, error) { return NewConservativeCountMin(0.1, 1) }, "delta"},
		{"delta=NaN", func() (*CountMin, error) { return NewCountMin(0.1, math.NaN()) }, "delta"},
		{"delta=tiny", func() (*CountMin, error) { return NewCountMin(0.1, 1e-300) }, "delta"},
		{"width=0", func() (*CountMin, error) { return NewCountMinSize(0, 4) }, "width"},
		{"width=1", func() (*CountMin, error) { return NewCountMinSize(1, 4) }, "width"},
		{"width=1000", func() (*CountMin, error) { return NewConservativeCountMinSize(1000, 4) }, "width"},
		{"width=2^32", func() (*CountMin, error) { return NewCountMinSize(1<<32, 1) }, "width"},
		{"depth=0", func() (*CountMin, error) { return NewCountMinSize(64, 0) }, "depth"},
		{"depth=65", func() (*CountMin, error) { return NewCountMinSize(64, 65) }, "depth"},
		{"cells over cap", func() (*CountMin, error) { return NewCountMinSize(1<<26, 4) }, "width"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			cm, err := c.build()
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), c.param)
			require.Nil(t, cm)
		})
	}

	shapes := []struct {
		eps, delta    float64
		width, depth  int
		wantEps, want float64
	}{
		{0.01, 0.01, 512, 5, 0, 0},       // e/0.01 = 271.8 -> 512; ln 100 = 4.6 -> 5
		{0.001, 0.001, 4096, 7, 0, 0},    // 2718.3 -> 4096; 6.9 -> 7
		{0.5, 0.5, 8, 1, 0, 0},           // 5.4 -> 8; 0.69 -> 1
		{0.9, 0.99, 4, 1, 0, 0},          // 3.02 -> 4; ln(1/0.99) -> 1
		{math.E / 64, 0.05, 64, 3, 0, 0}, // exactly 64 stays 64
	}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("eps=%g,delta=%g", s.eps, s.delta), func(t *testing.T) {
			for _, cons := range []bool{false, true} {
				build := NewCountMin
				if cons {
					build = NewConservativeCountMin
				}
				cm, err := build(s.eps, s.delta)
				require.NoError(t, err)
				require.Equal(t, s.width, cm.Width())
				require.Equal(t, s.depth, cm.Depth())
				require.Equal(t, cons, cm.Conservative())
				require.Zero(t, cm.Total())
			}
		})
	}
}

// TestCountMinColumn checks that column is where AddHash writes.
func TestCountMinColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		cm, err := NewCountMinSize(64, 5)
		require.NoError(t, err)
		h := r.Uint64()
		cm.AddHash(h, 7)
		for row := range cm.depth {
			for col := range cm.width {
				want := uint64(0)
				if col == cm.column(h, row) {
					want = 7
				}
				require.Equal(t, want, cm.counts[row*cm.width+col], "row %d col %d", row, col)
			}
		}
		require.Equal(t, uint64(7), cm.EstimateHash(h))
	}
}

// cmZipfStream returns n updates over keys distinct random hashes with
// Zipf(s) ranks, and the exact counts.
func cmZipfStream(r *rand.Rand, keys int, n int, s float64) ([]uint64, map[uint64]uint64, []uint64) {
	hashes := make([]uint64, keys)
	for i := range hashes {
		hashes[i] = r.Uint64()
	}
	z := rand.NewZipf(r, s, 1, uint64(keys-1))
	stream := make([]uint64, n)
	truth := make(map[uint64]uint64, keys)
	for i := range stream {
		h := hashes[z.Uint64()]
		stream[i] = h
		truth[h]++
	}
	return stream, truth, hashes
}

func TestCountMinNeverUndercountsAndConservativeNeverWorse(t *testing.T) {
	for _, shape := range []struct{ w, d int }{{16, 2}, {64, 4}, {1024, 3}} {
		t.Run(fmt.Sprintf("w=%d,d=%d", shape.w, shape.d), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(shape.w), uint64(shape.d)))
			stream, truth, hashes := cmZipfStream(r, 2000, 50000, 1.1)
			plain, err := NewCountMinSize(shape.w, shape.d)
			require.NoError(t, err)
			cons, err := NewConservativeCountMinSize(shape.w, shape.d)
			require.NoError(t, err)
			for i, h := range stream {
				n := uint64(1 + i%3) // weighted updates too
				plain.AddHash(h, n)
				cons.AddHash(h, n)
				truth[h] += n - 1
			}
			var sumPlain, sumCons uint64
			for _, h := range hashes {
				p, c := plain.EstimateHash(h), cons.EstimateHash(h)
				require.GreaterOrEqual(t, c, truth[h], "conservative undercounts")
				require.GreaterOrEqual(t, p, c, "conservative worse than plain")
				sumPlain += p - truth[h]
				sumCons += c - truth[h]
			}
			require.Equal(t, plain.Total(), cons.Total())
			t.Logf("total overcount plain %d, conservative %d", sumPlain, sumCons)
		})
	}
}

// TestCountMinErrorBound checks the guarantee P(estimate > true + εN) <= δ
// with ε = e/width and δ = e^-depth. For one query key per trial, chosen
// uniformly among the stream's keys, the trials are independent, so the
// failure count is Binomial(T, p) with p <= δ, and a correct sketch shows at
// most cmrBinomUpper(T, δ, 1e-6) failures (false alarm rate 1e-6). Over all
// keys of a trial the failure fraction F_t lies in [0, 1] with mean <= δ, so
// by Hoeffding the mean over T independent trials exceeds
// δ + sqrt(ln(1/α)/(2T)) with probability at most α = 1e-6.
func TestCountMinErrorBound(t *testing.T) {
	trials := 400
	if testing.Short() {
		trials = 60
	}
	for _, cons := range []bool{false, true} {
		for _, shape := range []struct{ w, d int }{{32, 2}, {64, 3}} {
			t.Run(fmt.Sprintf("conservative=%v,w=%d,d=%d", cons, shape.w, shape.d), func(t *testing.T) {
				eps, delta := math.E/float64(shape.w), math.Exp(-float64(shape.d))
				var oneFails int
				var fracSum float64
				for trial := range trials {
					r := rand.New(rand.NewPCG(uint64(trial), 99))
					stream, truth, hashes := cmZipfStream(r, 500, 5000, 1.05)
					build := NewCountMinSize
					if cons {
						build = NewConservativeCountMinSize
					}
					cm, err := build(shape.w, shape.d)
					require.NoError(t, err)
					for _, h := range stream {
						cm.AddHash(h, 1)
					}
					limit := float64(cmTruthSum(truth)) * eps
					fails := 0
					keys := 0
					for _, h := range hashes {
						tr, ok := truth[h]
						if !ok {
							continue
						}
						keys++
						if float64(cm.EstimateHash(h)) > float64(tr)+limit {
							fails++
						}
					}
					fracSum += float64(fails) / float64(keys)
					q := hashes[r.IntN(len(hashes))]
					if float64(cm.EstimateHash(q)) > float64(truth[q])+limit {
						oneFails++
					}
				}
				bound := cmrBinomUpper(trials, delta, 1e-6)
				require.LessOrEqual(t, oneFails, bound, "query-key failures over %d trials", trials)
				mean := fracSum / float64(trials)
				require.LessOrEqual(t, mean, delta+math.Sqrt(math.Log(1e6)/(2*float64(trials))))
				t.Logf("δ=%.3f: query failures %d/%d (bound %d), mean key failure fraction %.4f", delta, oneFails, trials, bound, mean)
			})
		}
	}
}

func cmTruthSum(m map[uint64]uint64) uint64 {
	var s uint64
	for _, v := range m {
		s += v
	}
	return s
}

// cmRowCollisions draws pairs of random hashes that collide in row 0 under
// index and returns, for each, how many of rows 1..depth-1 they also
// collide in. Independent rows make that count Binomial(depth-1, 1/width).
func cmRowCollisions(r *rand.Rand, pairs, width, depth int, index func(h uint64, row int) int) []int {
	counts := make([]int, depth)
	for range pairs {
		a := r.Uint64()
		var b uint64
		for {
			b = r.Uint64()
			if b != a && index(a, 0) == index(b, 0) {
				break
			}
		}
		k := 0
		for row := 1; row < depth; row++ {
			if index(a, row) == index(b, row) {
				k++
			}
		}
		counts[k]++
	}
	return counts
}

// cmRowIndependenceP returns the chi-square p-value of the other-row
// collision counts of pairs colliding in row 0 against Binomial(depth-1,
// 1/width), pooling counts of 2 and more into one cell, and the number of
// pairs colliding in every row.
func cmRowIndependenceP(counts []int, width int) (float64, int) {
	d1 := len(counts) - 1
	q := 1 / float64(width)
	total := 0
	for _, c := range counts {
		total += c
	}
	p0 := math.Pow(1-q, float64(d1))
	p1 := float64(d1) * q * math.Pow(1-q, float64(d1-1))
	obs := []float64{float64(counts[0]), float64(counts[1]), float64(total - counts[0] - counts[1])}
	exp := []float64{p0 * float64(total), p1 * float64(total), (1 - p0 - p1) * float64(total)}
	return cmrChiSquareP(obs, exp), counts[d1]
}

// TestCountMinRowIndependence shows that a collision in row 0 tells nothing
// about the other rows: the number of other rows where a colliding pair
// also collides follows Binomial(d-1, 1/w), and pairs colliding in all d
// rows occur about (1/w)^(d-1) as often as row-0 collisions. The same check
// rejects ristretto's (h ^ seed[i]) & mask rows and the linear
// Kirsch–Mitzenmacher rows (h1 + i·h2) & mask.
func TestCountMinRowIndependence(t *testing.T) {
	const width, depth = 16, 4
	pairs := 20000
	seeds := [depth]uint64{0x1234567, 0x89abcdef, 0xfedcba98, 0x7654321}
	ristretto := func(h uint64, row int) int { return int((h ^ seeds[row]) & (width - 1)) }
	linear := func(h uint64, row int) int {
		h2 := cmRowStep(h)
		return int((h + uint64(row)*h2) & (width - 1))
	}
	// Pairs colliding everywhere, given a row-0 collision: Binomial(pairs,
	// (1/w)^(d-1)); its 1e-6 upper tail.
	allBound := cmrBinomUpper(pairs, math.Pow(1.0/width, depth-1), 1e-6)

	shapes := []struct{ w, d int }{{width, depth}, {2, 8}}
	if !testing.Short() {
		shapes = append(shapes, struct{ w, d int }{64, 3})
	}
	for _, shape := range shapes {
		t.Run(fmt.Sprintf("ours,w=%d,d=%d", shape.w, shape.d), func(t *testing.T) {
			cm, err := NewCountMinSize(shape.w, shape.d)
			require.NoError(t, err)
			bound := cmrBinomUpper(pairs, math.Pow(1/float64(shape.w), float64(shape.d-1)), 1e-6)
			fails, pBound, ps := cmrPValueFailures(10, 0.01, func(seed uint64) float64 {
				r := rand.New(rand.NewPCG(seed, 7))
				counts := cmRowCollisions(r, pairs, shape.w, shape.d, cm.column)
				p, all := cmRowIndependenceP(counts, shape.w)
				require.LessOrEqual(t, all, bound, "pairs colliding in every row")
				return p
			})
			require.LessOrEqual(t, fails, pBound, "p-values %v", ps)
		})
	}
	for name, index := range map[string]func(uint64, int) int{"ristretto": ristretto, "linearKM": linear} {
		t.Run(name+"_fails", func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 7))
			counts := cmRowCollisions(r, pairs, width, depth, index)
			p, all := cmRowIndependenceP(counts, width)
			require.Less(t, p, 1e-9)
			require.Greater(t, all, allBound)
			t.Logf("%s: other-row collision counts %v, p=%.3g", name, counts, p)
		})
	}
}

func TestCountMinSaturates(t *testing.T) {
	for _, cons := range []bool{false, true} {
		t.Run(fmt.Sprintf("conservative=%v", cons), func(t *testing.T) {
			build := NewCountMinSize
			if cons {
				build = NewConservativeCountMinSize
			}
			cm, err := build(8, 3)
			require.NoError(t, err)
			cm.AddHash(1, math.MaxUint64-1)
			require.Equal(t, uint64(math.MaxUint64-1), cm.EstimateHash(1))
			cm.AddHash(1, 5)
			require.Equal(t, uint64(math.MaxUint64), cm.EstimateHash(1), "counter wrapped")
			require.Equal(t, uint64(math.MaxUint64), cm.Total())
			cm.AddHash(2, 3)
			require.GreaterOrEqual(t, cm.EstimateHash(2), uint64(3))
			require.Equal(t, uint64(math.MaxUint64), cm.Total())

			other, err := build(8, 3)
			require.NoError(t, err)
			other.AddHash(1, 10)
			require.NoError(t, other.Merge(cm))
			require.Equal(t, uint64(math.MaxUint64), other.EstimateHash(1), "merge wrapped")
			require.Equal(t, uint64(math.MaxUint64), other.Total())
		})
	}
}

func cmBuild(t *testing.T, cons bool, w, d int, stream []uint64) *CountMin {
	t.Helper()
	build := NewCountMinSize
	if cons {
		build = NewConservativeCountMinSize
	}
	cm, err := build(w, d)
	require.NoError(t, err)
	for i, h := range stream {
		cm.AddHash(h, uint64(1+i%4))
	}
	return cm
}

func cmClone(t *testing.T, c *CountMin) *CountMin {
	t.Helper()
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	var out CountMin
	require.NoError(t, out.UnmarshalBinary(b))
	return &out
}

func TestCountMinMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, _, _ := cmZipfStream(r, 300, 4000, 1.2)
	b, _, _ := cmZipfStream(r, 300, 3000, 1.2)
	concat := append(append([]uint64(nil), a...), b...)

	t.Run("plain equals concatenation in any order", func(t *testing.T) {
		// cmBuild weights update i by 1+i%4, so the concatenation is built
		// by adding a then b with their own positions' weights.
		want := cmBuild(t, false, 64, 4, a)
		for i, h := range b {
			want.AddHash(h, uint64(1+i%4))
		}
		ab := cmBuild(t, false, 64, 4, a)
		require.NoError(t, ab.Merge(cmBuild(t, false, 64, 4, b)))
		ba := cmBuild(t, false, 64, 4, b)
		require.NoError(t, ba.Merge(cmBuild(t, false, 64, 4, a)))
		require.Equal(t, want, ab)
		require.Equal(t, want, ba)
		self := cmClone(t, ab)
		require.NoError(t, self.Merge(self))
		require.Equal(t, 2*ab.Total(), self.Total())
		for _, h := range concat {
			require.Equal(t, 2*ab.EstimateHash(h), self.EstimateHash(h))
		}
	})
	t.Run("conservative is an upper bound", func(t *testing.T) {
		ab := cmBuild(t, true, 64, 4, a)
		require.NoError(t, ab.Merge(cmBuild(t, true, 64, 4, b)))
		plain := cmBuild(t, false, 64, 4, a)
		require.NoError(t, plain.Merge(cmBuild(t, false, 64, 4, b)))
		truth := map[uint64]uint64{}
		for i, h := range a {
			truth[h] += uint64(1 + i%4)
		}
		for i, h := range b {
			truth[h] += uint64(1 + i%4)
		}
		for h, c := range truth {
			est := ab.EstimateHash(h)
			require.GreaterOrEqual(t, est, c)
			require.LessOrEqual(t, est, plain.EstimateHash(h))
		}
		require.Equal(t, plain.Total(), ab.Total())
	})
	t.Run("incompatible", func(t *testing.T) {
		base := cmBuild(t, false, 64, 4, a)
		before := cmClone(t, base)
		for name, other := range map[string]*CountMin{
			"width":        cmBuild(t, false, 32, 4, b),
			"depth":        cmBuild(t, false, 64, 3, b),
			"conservative": cmBuild(t, true, 64, 4, b),
		} {
			err := base.Merge(other)
			require.ErrorIs(t, err, ErrIncompatible, name)
			require.Equal(t, before, base, "receiver changed by failed merge")
		}
		require.ErrorIs(t, base.Merge(nil), ErrInvalidParameter)
	})
}

func TestCountMinAllocs(t *testing.T) {
	plain, err := NewCountMin(0.001, 0.01)
	require.NoError(t, err)
	cons, err := NewConservativeCountMin(0.001, 0.01)
	require.NoError(t, err)
	h := uint64(0x1234)
	for name, f := range map[string]func(){
		"AddHash":              func() { plain.AddHash(h, 1); h += 0x9e3779b97f4a7c15 },
		"ConservativeAddHash":  func() { cons.AddHash(h, 1); h += 0x9e3779b97f4a7c15 },
		"EstimateHash":         func() { cmSink += plain.EstimateHash(h); h++ },
		"AddString":            func() { plain.AddString("some key", 2) },
		"SaturatingAddHash":    func() { plain.AddHash(h, math.MaxUint64) },
		"ConservativeEstimate": func() { cmSink += cons.EstimateString("k") },
	} {
		t.Run(name, func(t *testing.T) {
			require.Zero(t, testing.AllocsPerRun(1000, f))
		})
	}
}

// TestCountMinReset: after Reset a sketch encodes exactly as a new one of the
// same shape and rule, estimates 0 everywhere, counts afresh, and Reset
// allocates nothing.
func TestCountMinReset(t *testing.T) {
	for _, conservative := range []bool{false, true} {
		t.Run(fmt.Sprintf("conservative=%v", conservative), func(t *testing.T) {
			mk := NewCountMinSize
			if conservative {
				mk = NewConservativeCountMinSize
			}
			c, err := mk(256, 3)
			require.NoError(t, err)
			fresh, err := mk(256, 3)
			require.NoError(t, err)
			for i := range uint64(5000) {
				c.AddHash(HashUint64(i%97), 1+i%3)
			}
			require.NotZero(t, c.Total())
			c.Reset()
			got, err := c.MarshalBinary()
			require.NoError(t, err)
			want, err := fresh.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Zero(t, c.EstimateHash(HashUint64(5)))
			c.AddHash(HashUint64(5), 7)
			require.Equal(t, uint64(7), c.EstimateHash(HashUint64(5)))
			require.Equal(t, uint64(7), c.Total())
			require.Zero(t, testing.AllocsPerRun(10, c.Reset))
		})
	}
}

// TestCountMinAddHashesEqualsAddHash: a batch gives the counters of AddHash
// one hash at a time, for plain and conservative sketches, and saturates
// the same way near 2^64.
func TestCountMinAddHashesEqualsAddHash(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	hs := make([]uint64, 3000)
	for i := range hs {
		hs[i] = r.Uint64N(500) * 0x9e3779b97f4a7c15
	}
	for _, mk := range []func(int, int) (*CountMin, error){NewCountMinSize, NewConservativeCountMinSize} {
		for _, n := range []uint64{1, 3, math.MaxUint64 / 1000} {
			a, err := mk(128, 5)
			require.NoError(t, err)
			b, err := mk(128, 5)
			require.NoError(t, err)
			for off := 0; off < len(hs); off += 97 {
				chunk := hs[off:min(off+97, len(hs))]
				a.AddHashes(chunk, n)
				for _, h := range chunk {
					b.AddHash(h, n)
				}
			}
			ea, err := a.MarshalBinary()
			require.NoError(t, err)
			eb, err := b.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, eb, ea, "conservative=%v n=%d", a.Conservative(), n)
		}
	}
	c, err := NewCountMinSize(64, 4)
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(100, func() { c.AddHashes(hs[:64], 1) }))
}
