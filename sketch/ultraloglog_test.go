package sketch

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ullDefinition computes the registers of precision p for the hashes hs from
// the definition, independently of the packing code: the update value of h
// is k = 1 + (leading zero bits of the 64-p bits after the index), or 65-p
// if they are all zero, counted bit by bit; register i holds 0 if no hash
// chose it, else 4(u+p-2) + 2·[u-1 seen] + [u-2 seen] for its largest value u.
func ullDefinition(p uint8, hs []uint64) []uint8 {
	m := 1 << p
	seen := make([]map[int]bool, m)
	for _, h := range hs {
		i := h >> (64 - p)
		k := 1
		for bit := 63 - int(p); bit >= 0 && h>>bit&1 == 0; bit-- {
			k++
		}
		if seen[i] == nil {
			seen[i] = map[int]bool{}
		}
		seen[i][k] = true
	}
	regs := make([]uint8, m)
	for i, ks := range seen {
		if ks == nil {
			continue
		}
		u := 0
		for k := range ks {
			u = max(u, k)
		}
		r := 4 * (u + int(p) - 2)
		if ks[u-1] {
			r += 2
		}
		if ks[u-2] {
			r++
		}
		regs[i] = uint8(r)
	}
	return regs
}

// ullHashes returns n hashes Mix64(off+i): distinct, as a key stream of
// distinct keys gives.
func ullHashes(off uint64, n int) []uint64 {
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = hashx.Mix64(off + uint64(i))
	}
	return hs
}

// ullSkewedHashes returns n random hashes whose bits after a random index
// are mostly zero, so that they reach the largest update values and the
// cap (65-p) often.
func ullSkewedHashes(rng *rand.Rand, p uint8, n int) []uint64 {
	hs := make([]uint64, n)
	for i := range hs {
		z := rng.IntN(66 - int(p)) // leading zeros after the index, 0..64-p
		h := rng.Uint64()>>(64-p)<<(64-p) | rng.Uint64()>>(int(p)+z)
		if z < 64-int(p) {
			h |= 1 << (63 - int(p) - z)
		}
		hs[i] = h
	}
	return hs
}

func TestUltraLogLogRegistersMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	for _, p := range []uint8{4, 5, 8, 11} {
		for _, n := range []int{0, 1, 5, 100, 3000} {
			for _, kind := range []string{"uniform", "skewed"} {
				t.Run(fmt.Sprintf("p=%d/n=%d/%s", p, n, kind), func(t *testing.T) {
					hs := ullHashes(uint64(p)<<32|uint64(n), n)
					if kind == "skewed" {
						hs = ullSkewedHashes(rng, p, n)
					}
					want := ullDefinition(p, hs)
					one := newULLT(t, p)
					for _, h := range hs {
						one.AddHash(h)
					}
					require.Equal(t, want, one.regs, "AddHash")
					batch := newULLT(t, p)
					batch.AddHashes(hs)
					require.Equal(t, want, batch.regs, "AddHashes")
					i, ok := ullCheckRegisters(one.regs, p)
					require.True(t, ok, "register %d = %d is not valid", i, one.regs[i])
				})
			}
		}
	}
}

// TestUltraLogLogStepMatchesPack checks the update table against the
// definition of the layout: for every precision, every register valid there
// and every bit position of an update value, AddHash's 4b + step[r - 4b]
// is the register holding the top three of r's values and the new one.
func TestUltraLogLogStepMatchesPack(t *testing.T) {
	for p := uint8(UltraLogLogMinPrecision); p <= UltraLogLogMaxPrecision; p++ {
		for r := range 256 {
			if !ullValidRegister(uint8(r), p) {
				continue
			}
			for b := uint(p) - 1; b < 64; b++ {
				want := ullPack(ullUnpack(uint8(r)) | 1<<b)
				got := uint8(4*b) + ullStep[(uint(r)-4*b)&511]
				require.Equal(t, want, got, "p=%d r=%d b=%d", p, r, b)
				require.True(t, ullValidRegister(got, p))
			}
		}
	}
}

// TestUltraLogLogValidRegisters checks ullValidRegister against the
// registers a stream can produce: every value reachable from an empty
// register by updates with values 1..65-p is valid, and no other.
func TestUltraLogLogValidRegisters(t *testing.T) {
	for _, p := range []uint8{4, 5, 13, 26} {
		reach := map[uint8]bool{0: true}
		frontier := []uint8{0}
		for len(frontier) > 0 {
			r := frontier[len(frontier)-1]
			frontier = frontier[:len(frontier)-1]
			for b := uint(p) - 1; b < 64; b++ {
				n := ullPack(ullUnpack(r) | 1<<b)
				if !reach[n] {
					reach[n] = true
					frontier = append(frontier, n)
				}
			}
		}
		for r := range 256 {
			require.Equal(t, reach[uint8(r)], ullValidRegister(uint8(r), p), "p=%d r=%d", p, r)
		}
	}
}

func TestUltraLogLogNewErrors(t *testing.T) {
	for _, p := range []uint8{0, 3, 27, 64, 255} {
		s, err := NewUltraLogLog(p)
		require.Nil(t, s)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "precision")
	}
	for _, p := range []uint8{4, 26} {
		s, err := NewUltraLogLog(p)
		require.NoError(t, err)
		require.Equal(t, p, s.Precision())
		require.Len(t, s.regs, 1<<p)
		require.Zero(t, s.Estimate())
	}
}

func TestUltraLogLogFromRegisters(t *testing.T) {
	s := ullFromStream(t, 10, 5000, 99)
	regs := s.Registers()
	c, err := NewUltraLogLogFromRegisters(regs)
	require.NoError(t, err)
	require.Equal(t, s.regs, c.regs)
	require.Equal(t, s.Estimate(), c.Estimate())
	regs[0] ^= 0xff // a copy both ways
	require.Equal(t, s.regs, c.regs)

	for _, bad := range []struct {
		name string
		regs []byte
	}{
		{"empty", nil},
		{"p=3", make([]byte, 8)},
		{"not a power of two", make([]byte, 100)},
		{"p=27", make([]byte, 1<<27)},
		{"unreachable register", append([]byte{4*9 + 1}, make([]byte, 1023)...)}, // p = 10: t = 9 = p-1 with a low bit
		{"below p-1", append([]byte{4}, make([]byte, 15)...)},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := NewUltraLogLogFromRegisters(bad.regs)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "registers")
		})
	}
}

func TestUltraLogLogAddForms(t *testing.T) {
	a, b := newULLT(t, 12), newULLT(t, 12)
	for i := range 2000 {
		key := []byte(fmt.Sprintf("key-%d", i))
		a.Add(key)
		a.AddString(string(key) + "!")
		b.AddHash(Hash(key))
		b.AddHash(HashString(string(key) + "!"))
	}
	var k8 [8]byte
	for i := range 500 {
		k8[0], k8[5] = byte(i), byte(i>>8)
		a.Add(k8[:])
		b.AddHash(Hash(k8[:]))
	}
	require.Equal(t, b.regs, a.regs)
}

func TestUltraLogLogMerge(t *testing.T) {
	for _, p := range []uint8{4, 9, 12} {
		for _, n := range []int{0, 10, 1000, 50_000} {
			t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
				all := ullHashes(uint64(n)<<20, n)
				x, y := all[:n*2/3], all[n/3:] // overlapping thirds
				a, b, whole := newULLT(t, p), newULLT(t, p), newULLT(t, p)
				a.AddHashes(x)
				b.AddHashes(y)
				whole.AddHashes(all)
				ab, ba := a.Clone(), b.Clone()
				require.NoError(t, ab.Merge(b))
				require.NoError(t, ba.Merge(a))
				require.Equal(t, whole.regs, ab.regs, "merge is the sketch of the union")
				require.Equal(t, whole.regs, ba.regs, "merge commutes")
				before := slices.Clone(ab.regs)
				require.NoError(t, ab.Merge(ab))
				require.NoError(t, ab.Merge(whole))
				require.Equal(t, before, ab.regs, "merge is idempotent")
				require.Equal(t, ullDefinition(p, all), whole.regs)
			})
		}
	}
	t.Run("errors", func(t *testing.T) {
		a := ullFromStream(t, 10, 100, 1)
		before := slices.Clone(a.regs)
		err := a.Merge(ullFromStream(t, 11, 100, 2))
		require.ErrorIs(t, err, ErrIncompatible)
		require.ErrorContains(t, err, "Downsize")
		err = a.Merge(ullFromStream(t, 9, 100, 2))
		require.ErrorIs(t, err, ErrIncompatible)
		require.ErrorIs(t, a.Merge(nil), ErrInvalidParameter)
		require.ErrorContains(t, a.Merge(&UltraLogLog{}), "other")
		require.ErrorIs(t, a.Merge(&UltraLogLog{}), ErrInvalidParameter)
		require.Equal(t, before, a.regs, "a failed merge leaves the receiver unchanged")
		var z UltraLogLog
		err = z.Merge(a)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "receiver")
	})
}

// TestUltraLogLogDownsize checks that lowering the precision gives exactly
// the sketch built at the lower precision from the same hashes, for every
// step down, including hashes that reach the cap.
func TestUltraLogLogDownsize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, p := range []uint8{6, 10, 13} {
		for _, n := range []int{0, 7, 500, 40_000} {
			hs := ullHashes(uint64(p)<<40|uint64(n), n)
			hs = append(hs, ullSkewedHashes(rng, p, n/10)...)
			s := newULLT(t, p)
			s.AddHashes(hs)
			for q := uint8(UltraLogLogMinPrecision); q <= p; q++ {
				d, err := s.Downsize(q)
				require.NoError(t, err)
				require.Equal(t, q, d.Precision())
				require.Equal(t, ullDefinition(q, hs), d.regs, "p=%d n=%d -> q=%d", p, n, q)
			}
		}
	}
	s := ullFromStream(t, 10, 100, 3)
	for _, q := range []uint8{3, 11, 0} {
		_, err := s.Downsize(q)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "precision")
	}
}

func TestUltraLogLogCloneReset(t *testing.T) {
	s := ullFromStream(t, 8, 1000, 4)
	c := s.Clone()
	require.Equal(t, s.regs, c.regs)
	c.AddHashes(ullHashes(77, 1000))
	require.NotEqual(t, s.regs, c.regs, "a clone is independent")
	s.Reset()
	require.Equal(t, make([]uint8, 256), s.regs)
	require.Zero(t, s.Estimate())
	require.Equal(t, uint8(8), s.Precision())
}

// TestUltraLogLogReadsDoNotMutate pins that Estimate, EstimateML, Registers
// and the encoders only read the sketch.
func TestUltraLogLogReadsDoNotMutate(t *testing.T) {
	s := ullFromStream(t, 11, 20_000, 5)
	before := slices.Clone(s.regs)
	_ = s.Estimate()
	_ = s.EstimateML()
	_ = s.Registers()
	_, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, s.regs)
}

func TestUltraLogLogZeroValue(t *testing.T) {
	var z UltraLogLog
	require.Zero(t, z.Precision())
	for name, f := range map[string]func(){
		"AddHash":            func() { z.AddHash(1) },
		"AddHashes":          func() { z.AddHashes([]uint64{1}) },
		"Add":                func() { z.Add([]byte("x")) },
		"AddString":          func() { z.AddString("x") },
		"Estimate":           func() { z.Estimate() },
		"EstimateML":         func() { z.EstimateML() },
		"EstimateMartingale": func() { z.EstimateMartingale() },
		"MartingaleValid":    func() { z.MartingaleValid() },
		"Registers":          func() { z.Registers() },
		"Clone":              func() { z.Clone() },
		"Reset":              func() { z.Reset() },
		"Downsize":           func() { _, _ = z.Downsize(4) },
	} {
		require.PanicsWithValue(t, "sketch: UltraLogLog used without NewUltraLogLog, NewUltraLogLogFromRegisters or UnmarshalBinary (its zero value is not usable)", f, name)
	}
	_, err := z.MarshalBinary()
	require.ErrorIs(t, err, ErrInvalidParameter)
	dst, err := z.AppendBinary([]byte("x"))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.Equal(t, []byte("x"), dst)
	b, err := ullFromStream(t, 5, 30, 6).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, z.UnmarshalBinary(b), "a zero UltraLogLog may be decoded into")
	require.Equal(t, uint8(5), z.Precision())
	z.AddHash(7) // and is then usable
}

func TestUltraLogLogAllocs(t *testing.T) {
	s := ullFromStream(t, 14, 1000, 8)
	hs := ullHashes(9, 4096)
	i := 0
	require.Zero(t, testing.AllocsPerRun(10_000, func() {
		s.AddHash(hs[i%len(hs)])
		i++
	}), "AddHash")
	require.Zero(t, testing.AllocsPerRun(100, func() { s.AddHashes(hs) }), "AddHashes")
	require.Zero(t, testing.AllocsPerRun(100, func() { ullSink += s.Estimate() }), "Estimate")
	require.Zero(t, testing.AllocsPerRun(100, func() { ullSink += s.EstimateML() }), "EstimateML")
	o := ullFromStream(t, 14, 1000, 10)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = s.Merge(o) }), "Merge")
	buf := make([]byte, 0, 1<<15)
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.AppendBinary(buf[:0]) }), "AppendBinary")
}

// TestUltraLogLogEstimateEnds checks the ends of the range: an empty sketch
// estimates 0, a few distinct hashes are counted exactly, and a sketch
// whose every register is at the cap with both lower values seen (the
// largest state) estimates +∞, saturated to MaxUint64.
func TestUltraLogLogEstimateEnds(t *testing.T) {
	for _, p := range []uint8{4, 10, 16} {
		s := newULLT(t, p)
		require.Zero(t, s.Estimate())
		require.Zero(t, s.EstimateML())
		full := bytesOf(255, 1<<p)
		f, err := NewUltraLogLogFromRegisters(full)
		require.NoError(t, err)
		require.Equal(t, uint64(math.MaxUint64), f.Estimate())
		require.Equal(t, uint64(math.MaxUint64), f.EstimateML())
	}
	s := newULLT(t, 12)
	for n := 1; n <= 20; n++ {
		s.AddHash(hashx.Mix64(uint64(n) + 1<<50))
		require.Equal(t, uint64(n), s.Estimate(), "n=%d", n)
		require.Equal(t, uint64(n), s.EstimateML(), "n=%d", n)
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// TestUltraLogLogModelConstants recomputes, from η_0..η_3 and τ alone, the
// two facts the estimator's other constants rest on: in the Poisson model
// with rate λ per register, E[g] = λ^-τ (to the ±4e-6 ripple of the optimal
// η), and the variance of Σ g makes the relative standard error of
// (Σ g)^(-1/τ) equal to sqrt(V/m) with V = 0.6119 (averaged over a period of
// log2 λ, as the paper does). It also recomputes the ML estimator's
// constants from their closed forms.
func TestUltraLogLogModelConstants(t *testing.T) {
	var eta2 [4]float64
	for l, e := range ullEta {
		eta2[l] = e * e
	}
	psi := func(x float64, e [4]float64) float64 {
		x2 := x * x
		return e[0]*x*x2 + e[1]*x*(1-x2) + e[2]*(1-x)*x2 + e[3]*(1-x)*(1-x2)
	}
	vSum := 0.0
	const steps = 16
	for s := range steps {
		lambda := math.Exp2(30 + float64(s)/steps)
		var mean, sq float64
		for j := -10; j < 100; j++ { // the register's largest value u = j
			q := math.Exp(-lambda * math.Exp2(-float64(j))) // P(value j unseen) = P(none above j)
			pu := (1 - q) * q
			w := math.Exp2(-ullTau * float64(j))
			mean += pu * w * psi(q*q, ullEta)
			sq += pu * w * w * psi(q*q, eta2)
		}
		require.InDelta(t, 1, mean*math.Pow(lambda, ullTau), 1e-5, "E[g]·λ^τ at λ = %g", lambda)
		vSum += (sq - mean*mean) / (mean * mean) / (ullTau * ullTau)
	}
	require.InDelta(t, ullV, vSum/steps, 1e-6, "V")
	require.InDelta(t, 0.7822, math.Sqrt(ullV), 1e-4)
	require.InDelta(t, 0.7608621002725182, ullMLRSE, 1e-14, "sqrt(ln 2/ζ(2, 5/4))")
	// ζ(2, 5/4) = π² - 8·G·... has no short closed form; check hurwitzZeta
	// on ζ(2, 1) = π²/6 and ζ(3, 1/2) = 7ζ(3) instead.
	require.InDelta(t, math.Pi*math.Pi/6, hurwitzZeta(2, 1), 1e-15)
	require.InDelta(t, 7*1.2020569031595942, hurwitzZeta(3, 0.5), 1e-13)
	for p := UltraLogLogMinPrecision; p <= UltraLogLogMaxPrecision; p++ {
		m := math.Ldexp(1, p)
		require.InEpsilon(t, math.Pow(m, 1+1/ullTau)/(1+(1+ullTau)*ullV/(2*m)), ullLambda[p], 1e-15)
	}
}

// TestUltraLogLogAddHashInlines guards the inlining of AddHash (cost 79 of
// Go's budget of 80), which BenchmarkUltraLogLogVsHyperLogLogAddHash
// depends on, by asking the compiler.
func TestUltraLogLogAddHashInlines(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to ask the compiler")
	out, err := exec.Command(goBin, "build", "-gcflags=-m", "-o", os.DevNull, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Regexp(t, `(?m)can inline \(\*UltraLogLog\)\.AddHash$`, string(out))
	require.Regexp(t, `(?m)inlining call to \(\*UltraLogLog\)\.AddHash$`, string(out), "Add and AddString inline it")
}

// TestUltraLogLogConcurrentReads pins that the read methods only read: run
// together on one sketch (under -race in `make test`) they race with
// nothing and all see the same state.
func TestUltraLogLogConcurrentReads(t *testing.T) {
	s := ullFromStream(t, 10, 30_000, 13)
	want, err := s.MarshalBinary()
	require.NoError(t, err)
	wantEst, wantML := s.Estimate(), s.EstimateML()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				b, err := s.MarshalBinary()
				c := s.Clone()
				d, derr := s.Downsize(8)
				switch {
				case err != nil || derr != nil:
					errs[g] = errors.Join(err, derr)
				case !bytes.Equal(b, want) || !bytes.Equal(c.Registers(), s.Registers()) || d.Precision() != 8:
					errs[g] = fmt.Errorf("goroutine %d saw another state", g)
				case s.Estimate() != wantEst || s.EstimateML() != wantML:
					errs[g] = fmt.Errorf("goroutine %d saw another estimate", g)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}
