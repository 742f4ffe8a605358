package sketch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// mergeCase is a list (its distinct fine indexes and ranks) and the sorted
// tokens merged into it, at fine precision fp of a sketch of precision p.
type mergeCase struct {
	p, fp uint8
	list  [][2]uint32 // index, rank (the rank is dropped where not kept)
	toks  []uint32
}

// words writes the list with k = d, returning its words, entries and last
// register.
func (c mergeCase) words() ([]uint32, int, uint32) {
	d := uint(c.fp - c.p)
	e := entryWriter{k: d, d: d}
	for _, en := range c.list {
		e.add(en[0], uint8(en[1]))
	}
	return e.w.done(), e.n, e.reg
}

// mergeShapes builds lists and token sets that push the in-place merge's
// writer ahead of its reader: tokens of new indexes with kept ranks (the
// longest entries) below the whole list, tokens far past the list's last
// register (a long gap at its end), tokens of the list's own indexes, a
// list of many entries per register, and random mixes with repeated
// indexes among the tokens (as a merge of two sketches gives).
func mergeShapes(rng *rand.Rand, p, fp uint8) map[string]mergeCase {
	d := uint(fp - p)
	m := uint32(1) << p
	maxRank := sparseMaxRank(fp)
	idxOf := func(reg, low uint32) uint32 { return reg<<d | low&(1<<d-1) }
	tok := func(idx uint32) uint32 { return idx<<tokenRankBits | (1 + rng.Uint32N(maxRank)) }
	entries := func(regs []uint32, perReg int, keptRank bool) [][2]uint32 {
		set := map[uint32]bool{}
		for _, r := range regs {
			for range perReg {
				low := rng.Uint32N(1 << d)
				if keptRank {
					low = 0
				}
				set[idxOf(r, low)] = true
			}
		}
		var es [][2]uint32
		for _, idx := range slices.Sorted(func(yield func(uint32) bool) {
			for i := range set {
				if !yield(i) {
					return
				}
			}
		}) {
			es = append(es, [2]uint32{idx, 1 + rng.Uint32N(maxRank)})
		}
		return es
	}
	span := func(lo, hi uint32, n int) []uint32 { // n registers in [lo, hi)
		rs := make([]uint32, n)
		for i := range rs {
			rs[i] = lo + rng.Uint32N(hi-lo)
		}
		return rs
	}
	n := int(min(m/2, 600))
	cs := map[string]mergeCase{}
	// New entries with ranks, all below the list: the writer leads by all of
	// them before the reader has read past the list's first entry.
	list := entries(span(m/2, m, n), 1, false)
	var toks []uint32
	for r := range min(m/2, uint32(2*n)) {
		toks = append(toks, tok(idxOf(r, 0)))
	}
	cs["below"] = mergeCase{p, fp, list, toks}
	// A short list in the lowest registers, tokens up to the last register.
	list = entries(span(0, max(1, m/64), 8), 1, false)
	toks = nil
	for range n {
		toks = append(toks, tok(idxOf(m/64+rng.Uint32N(m-m/64), rng.Uint32N(1<<d))))
	}
	toks = append(toks, tok(idxOf(m-1, 0)))
	cs["beyond"] = mergeCase{p, fp, list, toks}
	// A list that ends early and tokens in the last registers: the first
	// token's long gap is written before the next tokens are read.
	toks = nil
	for r := m - min(m/4, 8); r < m; r++ {
		toks = append(toks, tok(idxOf(r, rng.Uint32N(1<<d))))
	}
	cs["far"] = mergeCase{p, fp, entries(span(0, max(1, m/16), n/4+1), 2, false), toks}
	// Tokens of the list's own indexes, with larger and smaller ranks.
	list = entries(span(0, m, n), 1, false)
	toks = nil
	for _, en := range list {
		toks = append(toks, en[0]<<tokenRankBits|(1+rng.Uint32N(maxRank)))
	}
	cs["same"] = mergeCase{p, fp, list, toks}
	// Many entries per register, tokens filling the gaps between them.
	list = entries(span(0, max(1, m/8), max(1, n/8)), 8, false)
	toks = nil
	for range 2 * n {
		toks = append(toks, tok(idxOf(rng.Uint32N(max(1, m/8)), rng.Uint32N(1<<d))))
	}
	cs["crowded"] = mergeCase{p, fp, list, toks}
	// Random lists and tokens, indexes repeated among the tokens.
	list = entries(span(0, m, n), 1, false)
	toks = nil
	for range n {
		idx := idxOf(rng.Uint32N(m), rng.Uint32N(1<<d))
		if rng.IntN(4) == 0 {
			idx = idxOf(rng.Uint32N(m), 0)
		}
		toks = append(toks, tok(idx))
		if rng.IntN(3) == 0 {
			toks = append(toks, tok(idx))
		}
	}
	cs["mixed"] = mergeCase{p, fp, list, toks}
	cs["empty-list"] = mergeCase{p, fp, nil, toks}
	cs["no-tokens"] = mergeCase{p, fp, list, nil}
	for name, c := range cs {
		slices.Sort(c.toks)
		cs[name] = c
	}
	return cs
}

// TestMergeRoomNeverOvertakes pins that the in-place merge writes what a
// merge into a new buffer writes whenever mergeRoom accepts, at every
// precision and both fine precisions, on token sets built to push the
// writer ahead of the reader. For each case it finds the least free room
// (words between the list's start and mem's start) mergeRoom accepts, with
// the tokens as mem's last words and elsewhere, and merges there, where the
// writer comes closest to the reader: a writer that overtook the reader
// would read words it had written and produce another list (mem's free
// words hold a pattern, not zeros).
func TestMergeRoomNeverOvertakes(t *testing.T) {
	for p := uint8(HyperLogLogMinPrecision); p <= HyperLogLogMaxPrecision; p++ {
		for _, fp := range []uint8{sparseHi, sparseLo} {
			rng := rand.New(rand.NewPCG(uint64(p), uint64(fp)))
			for name, c := range mergeShapes(rng, p, fp) {
				for _, inMem := range []bool{true, false} {
					t.Run(fmt.Sprintf("p=%d/fp=%d/%s/inMem=%v", p, fp, name, inMem), func(t *testing.T) {
						requireInPlaceMerges(t, c, inMem)
					})
				}
			}
		}
	}
}

// requireInPlaceMerges merges c in place at the least room mergeRoom
// accepts and at a few words more, and requires the result of a merge into
// a new buffer each time.
func requireInPlaceMerges(t *testing.T, c mergeCase, inMem bool) {
	t.Helper()
	d := uint(c.fp - c.p)
	words, n, last := c.words()
	want := mergeList(entryWriter{k: d, d: d}, words, n, c.toks)
	wantWords := slices.Clone(want.w.done())
	// setup returns a sparse state whose mem leaves a words free between
	// the list (at its start) and the tokens (at its end, if inMem), and
	// the tokens.
	setup := func(a int) (*sparseList, []uint32) {
		size := len(words) + a
		if inMem {
			size += len(c.toks)
		}
		mem := make([]uint32, size)
		for i := range mem {
			mem[i] = 0xa5a5a5a5 ^ uint32(i)*0x9e3779b1
		}
		copy(mem, words)
		toks := slices.Clone(c.toks)
		if inMem && len(toks) > 0 {
			copy(mem[size-len(toks):], toks)
			toks = mem[size-len(toks):]
		}
		return &sparseList{mem: mem, lw: len(words), n: n, fp: c.fp, last: last}, toks
	}
	accepts := func(a int) bool {
		sl, toks := setup(a)
		out, _ := sl.mergeRoom(toks, d)
		return out != nil
	}
	hi := 1
	for !accepts(hi) {
		hi *= 2
		require.LessOrEqual(t, hi, 1<<22, "mergeRoom refuses any room")
	}
	least := sort.Search(hi+1, accepts)
	for _, a := range []int{least, least + 1, least + 3} {
		sl, toks := setup(a)
		out, list := sl.mergeRoom(toks, d)
		require.NotNil(t, out, "a=%d", a)
		require.Equal(t, len(words), len(list), "a=%d", a)
		require.True(t, slices.Equal(words, list), "a=%d: the list moved intact", a)
		got := mergeList(entryWriter{w: bitWriter{w: out}, k: d, d: d}, list, n, toks)
		gotWords := got.w.done()
		require.Equal(t, wantWords, gotWords, "a=%d (least %d): in-place merge differs", a, least)
		require.Equal(t, want.n, got.n)
		require.Equal(t, want.bits, got.bits)
		require.Equal(t, want.reg, got.reg)
		require.Same(t, &sl.mem[0], &gotWords[0], "a=%d: written within mem", a)
	}
}
