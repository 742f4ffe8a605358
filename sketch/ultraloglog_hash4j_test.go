package sketch

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// testdata/ultraloglog_hash4j/vectors.txt was written by Gen.java (beside
// it) from hash4j's own UltraLogLog, commit 41d814f of
// github.com/dynatrace-oss/hash4j (2026-08-20), whose classes were compiled
// for the purpose and not kept. Each line is one case:
//
//	add p n off sha fgra ml          registers after AddHash(Mix64(off+i)), i < n
//	regs p n off hex                 the same, registers in full
//	state p hex fgra ml              estimates of a given (synthetic) state
//	merge pa na oa pb nb ob sha      hash4j's merge (precision min(pa, pb))
//	downsize p n off q sha           hash4j's downsize to q
//
// with estimates as the bits of IEEE-754 doubles. The file is not edited to
// make a test pass; regenerate it with Gen.java.

// ullHash4jCases reads the vector file as fields per line, by kind.
func ullHash4jCases(t *testing.T) map[string][][]string {
	t.Helper()
	f, err := os.Open("testdata/ultraloglog_hash4j/vectors.txt")
	require.NoError(t, err)
	defer f.Close()
	cases := map[string][][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && line[0] != '#' {
			fs := strings.Fields(line)
			cases[fs[0]] = append(cases[fs[0]], fs[1:])
		}
	}
	require.NoError(t, sc.Err())
	return cases
}

func atou(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err)
	return v
}

func bitsF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	require.NoError(t, err)
	return math.Float64frombits(v)
}

// ullFromStream is a sketch of precision p after AddHash(Mix64(off+i)) for
// i < n.
func ullFromStream(t testing.TB, p uint8, n, off uint64) *UltraLogLog {
	t.Helper()
	s := newULLT(t, p)
	for i := range n {
		s.AddHash(hashx.Mix64(off + i))
	}
	return s
}

func shaHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// requireSameEstimate compares an estimate with hash4j's to a relative
// tolerance eps.
func requireSameEstimate(t *testing.T, want, got, eps float64, msg string) {
	t.Helper()
	if want == got {
		return
	}
	require.InEpsilon(t, want, got, eps, "%s: hash4j %v, here %v", msg, want, got)
}

// FGRA sums the same terms in another order, and in the small range both
// take 1 - z^(2^i) from z = e^-λ rounded to a double, which loses the
// digits of λ = n/m below 1e-16/λ: equal to within 1e-12 plus that,
// 1e-16·m/n̂ (a tenth of it is 4.5e-12 at p = 20, n = 100). hash4j stops its ML solver once a step is below 0.1% of the
// estimator's standard error, 0.001·0.761/√m relative; the solver here
// runs to machine precision.
func ullFGRAEps(p uint8, est float64) float64 { return 1e-12 + 1e-15*math.Ldexp(1, int(p))/est }

func ullMLEps(p uint8) float64 { return 1e-3 * ullMLRSE / math.Sqrt(math.Ldexp(1, int(p))) }

// TestUltraLogLogMatchesHash4j pins the register layout and the FGRA
// estimator to hash4j's UltraLogLog: for the same 64-bit hashes the
// registers are byte-equal, merge and downsize agree, and the estimates of
// streamed and synthetic states (small range, cap) agree to 1e-12.
func TestUltraLogLogMatchesHash4j(t *testing.T) {
	cases := ullHash4jCases(t)
	require.NotEmpty(t, cases["add"])
	for _, c := range cases["add"] {
		p, n, off := uint8(atou(t, c[0])), atou(t, c[1]), atou(t, c[2])
		if testing.Short() && n > 100_000 {
			continue
		}
		s := ullFromStream(t, p, n, off)
		require.Equal(t, c[3], shaHex(s.regs), "registers p=%d n=%d", p, n)
		var h [256]uint32
		ullHistogram(&h, s.regs)
		requireSameEstimate(t, bitsF(t, c[4]), ullFGRA(&h, p), ullFGRAEps(p, bitsF(t, c[4])), "FGRA p="+c[0]+" n="+c[1])
		requireSameEstimate(t, bitsF(t, c[5]), ullML(&h, p), ullMLEps(p), "ML p="+c[0]+" n="+c[1])
	}
	for _, c := range cases["regs"] {
		p, n, off := uint8(atou(t, c[0])), atou(t, c[1]), atou(t, c[2])
		require.Equal(t, c[3], hex.EncodeToString(ullFromStream(t, p, n, off).regs), "p=%d n=%d", p, n)
	}
	for _, c := range cases["state"] {
		regs, err := hex.DecodeString(c[1])
		require.NoError(t, err)
		s, err := NewUltraLogLogFromRegisters(regs)
		require.NoError(t, err, "hash4j state %s", c[1])
		require.Equal(t, uint8(atou(t, c[0])), s.Precision())
		var h [256]uint32
		ullHistogram(&h, s.regs)
		requireSameEstimate(t, bitsF(t, c[2]), ullFGRA(&h, s.p), ullFGRAEps(s.p, bitsF(t, c[2])), "FGRA state "+c[1])
		requireSameEstimate(t, bitsF(t, c[3]), ullML(&h, s.p), ullMLEps(s.p), "ML state "+c[1])
	}
	for _, c := range cases["merge"] {
		pa, na, oa := uint8(atou(t, c[0])), atou(t, c[1]), atou(t, c[2])
		pb, nb, ob := uint8(atou(t, c[3])), atou(t, c[4]), atou(t, c[5])
		a, b := ullFromStream(t, pa, na, oa), ullFromStream(t, pb, nb, ob)
		if pa > pb {
			a, b = b, a
		}
		lo, err := b.Downsize(a.p)
		require.NoError(t, err)
		require.NoError(t, a.Merge(lo))
		require.Equal(t, c[6], shaHex(a.regs), "merge %v", c)
	}
	for _, c := range cases["downsize"] {
		p, n, off, q := uint8(atou(t, c[0])), atou(t, c[1]), atou(t, c[2]), uint8(atou(t, c[3]))
		d, err := ullFromStream(t, p, n, off).Downsize(q)
		require.NoError(t, err)
		require.Equal(t, c[4], shaHex(d.regs), "downsize %v", c)
	}
}
