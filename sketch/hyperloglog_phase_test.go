package sketch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// hllForceMerge merges the pending set of a sparse s into its list now: the
// physical change a merge makes, at a moment the sketch would not choose.
// It ends the first phase (the set alone) early.
func hllForceMerge(s *HyperLogLog) {
	if s.regs == nil && s.sparse.mem != nil {
		s.rebuild(s.p, s.pendingAt(), false)
	}
}

// hllLogical is what a sketch shows of itself: its encoding, estimate,
// form and registers.
type hllLogical struct {
	enc    []byte
	est    uint64
	sparse bool
	regs   []uint8
}

func hllLogicalOf(t *testing.T, s *HyperLogLog) hllLogical {
	t.Helper()
	return hllLogical{enc: hllStateBytes(t, s), est: s.Estimate(), sparse: s.Sparse(), regs: hllRegisters(s)}
}

// TestHyperLogLogPhysicalPathsAgree builds sketches of the same set of
// hashes along different physical paths: the first phase's token set alone
// (each hash once, in order), the set filled by a shuffled stream where
// hashes repeat up to four times, the compressed list from the start
// (pending set merged at random moments), and merges of sketches of parts.
// Their encodings must be equal byte for byte and their estimates, forms
// and registers exactly equal, at sizes around the end of the first phase
// (3m/16 tokens), the switch from fine precision 26 to 23, and the switch
// to dense.
func TestHyperLogLogPhysicalPathsAgree(t *testing.T) {
	ps := []uint8{4, 5, 8, 10, 12, 14}
	if !testing.Short() {
		ps = append(ps, 16)
	}
	for _, p := range ps {
		setCap := 3 << p >> 4 // tokens the first phase holds
		sw := hllSparseSwitch(p)
		ns := []int{0, 1, 2, setCap / 2, setCap - 1, setCap, setCap + 1, 2 * setCap, sw / 2, sw - sw/20, sw + sw/20}
		for _, n := range ns {
			t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(p), uint64(n)))
				hs := hashesFrom(uint64(p)<<20+uint64(n), n)
				// Long zero runs: the ranks the fold to 23 and to p must keep.
				for i := 0; i < len(hs); i += 7 {
					q := uint(64 - p)
					hs[i] = hs[i]>>q<<q | hs[i]<<p>>p>>rng.UintN(q)
				}
				// Hashes of the same fine index (26 bits) as another, with a
				// larger rank: a repeat of the index that is not a repeat of
				// the entry.
				for i := 0; i < n; i += 5 {
					hs = append(hs, hs[i]>>38<<38|hs[i]<<26>>26>>(1+rng.UintN(37)))
				}

				inOrder := newHLL(t, p)
				for _, h := range hs {
					inOrder.AddHash(h)
				}
				want := hllLogicalOf(t, inOrder)
				require.Equal(t, directRegisters(p, hs), want.regs)

				repeated := newHLL(t, p)
				var stream []uint64
				for _, h := range hs {
					for range 1 + rng.IntN(4) {
						stream = append(stream, h)
					}
				}
				rng.Shuffle(len(stream), func(i, j int) { stream[i], stream[j] = stream[j], stream[i] })
				for _, h := range stream {
					repeated.AddHash(h)
				}
				require.Equal(t, want, hllLogicalOf(t, repeated), "repeats, shuffled")

				listed := newHLL(t, p)
				for i, h := range stream {
					listed.AddHash(h)
					if i == 0 || rng.IntN(max(1, setCap/2)) == 0 {
						hllForceMerge(listed)
					}
				}
				require.Equal(t, want, hllLogicalOf(t, listed), "list from the start")
				hllForceMerge(listed)
				require.Equal(t, want, hllLogicalOf(t, listed), "all merged into the list")

				cut := rng.IntN(len(stream) + 1)
				left, right := newHLL(t, p), newHLL(t, p)
				for _, h := range stream[:cut] {
					left.AddHash(h)
				}
				for _, h := range stream[cut:] {
					right.AddHash(h)
				}
				merged := newHLL(t, p)
				require.NoError(t, merged.Merge(right))
				require.NoError(t, merged.Merge(left))
				require.Equal(t, want, hllLogicalOf(t, merged), "merge of parts into an empty sketch")
				require.NoError(t, left.Merge(right))
				require.Equal(t, want, hllLogicalOf(t, left), "merge of parts")
				require.NoError(t, right.Merge(inOrder))
				require.Equal(t, want, hllLogicalOf(t, right), "merge of a part and the whole")
				require.LessOrEqual(t, hllSparseBytes(repeated), 1<<p)
				require.LessOrEqual(t, hllSparseBytes(merged), 1<<p)
			})
		}
	}
}

// TestHyperLogLogFirstPhase checks the first phase itself: at most about
// 3m/16 distinct tokens stay in the token set alone (no list is written,
// however often they repeat), its memory grows by doubling to at most the
// m bytes of the dense registers, and one more token starts the list.
func TestHyperLogLogFirstPhase(t *testing.T) {
	for _, p := range []uint8{4, 8, 12, 14} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			s := newHLL(t, p)
			setCap := 3 << p >> 4
			hs := hashesFrom(uint64(p)+900, setCap+1)
			// Distinct tokens: hashesFrom's hashes are distinct, and so are
			// their top 26 bits at these sizes (checked here).
			seen := map[uint32]bool{}
			for _, h := range hs {
				seen[sparseToken(h)] = true
			}
			require.Len(t, seen, len(hs))
			for range 3 {
				for _, h := range hs[:setCap-1] {
					s.AddHash(h)
				}
			}
			require.Zero(t, s.sparse.n, "no list while the set has room")
			require.Equal(t, setCap-1, s.sparse.k)
			require.LessOrEqual(t, hllSparseBytes(s), 1<<p)
			// A merge of two first-phase sketches whose union fits stays in
			// the first phase, equal to the sketch of the union.
			a, b := newHLL(t, p), newHLL(t, p)
			for i, h := range hs[:setCap-1] {
				[]*HyperLogLog{a, b}[i%2].AddHash(h)
			}
			b.AddHash(hs[0])
			require.NoError(t, a.Merge(b))
			require.Zero(t, a.sparse.n, "merged in the set")
			require.Equal(t, hllLogicalOf(t, s), hllLogicalOf(t, a))

			s.AddHash(hs[setCap-1])
			s.AddHash(hs[setCap])
			if s.regs == nil {
				require.Positive(t, s.sparse.n, "the list starts past the set's room")
			}
		})
	}
}

// TestSortTokens checks the radix sort of pending tokens against
// slices.Sort, on uniform tokens, tokens sharing their high or low bytes,
// and sizes around the cut to slices.Sort and at the edges of each
// scratch size (1Ki, 4Ki and 32Ki words on the stack, then the heap).
func TestSortTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 255, 256, 257, 1000, 1 << 10, 1<<10 + 1, 4096, 4097, 1 << 15, 1<<15 + 1, 49152} {
		for _, mask := range []uint32{0xffffffff, 0x0000ffff, 0xffff0000, 0x00ff00ff, 0} {
			t.Run(fmt.Sprintf("n=%d/mask=%08x", n, mask), func(t *testing.T) {
				toks := make([]uint32, n)
				for i := range toks {
					toks[i] = rng.Uint32()&mask | 1
				}
				want := slices.Clone(toks)
				slices.Sort(want)
				sortTokens(toks)
				require.Equal(t, want, toks)
			})
		}
	}
}
