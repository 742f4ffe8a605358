package sketch

import "slices"

// ddStore counts the values of one sign by bucket index in a window of
// contiguous buckets, bins[i] counting bucket off+i, never more than
// maxBins of them (the paper's bounded-size DDSketch, §2.2). When the
// buckets in use would span more than maxBins, the lowest ones are
// collapsed into the lowest bucket kept, which from then on also counts
// every lower index (collapsed). The state is a function of the multiset
// of indexes added: the buckets above F = hi-maxBins+1 (hi the highest
// index seen) count their own index, bucket F counts every index <= F. So
// stores merge exactly, and a collapsed store spans exactly maxBins buckets
// from its lowest non-empty one to its highest. Counts saturate at 2^64−1
// instead of wrapping.
type ddStore struct {
	bins      []uint64
	off       int
	collapsed bool
}

// ddGrowSlack is how many buckets beyond the span in use a store's window
// takes when it grows (up to maxBins), so that a drifting range does not
// move the window at every new bucket. Allocations are rounded up to the
// allocator's size class, and later growth uses that spare capacity first.
const ddGrowSlack = 32

// add counts c values of bucket idx, saturating. It does not allocate
// while idx is inside the window.
func (st *ddStore) add(idx int, c uint64, maxBins int) {
	if i := uint(idx - st.off); i < uint(len(st.bins)) {
		st.bins[i] = satAdd(st.bins[i], c)
	} else {
		st.addOutside(idx, c, maxBins)
	}
}

// addOutside counts c values of a bucket outside the window: moving or
// growing the window to cover it, collapsing the lowest buckets if the span
// would pass maxBins.
func (st *ddStore) addOutside(idx int, c uint64, maxBins int) {
	if st.collapsed && idx < st.off {
		st.bins[0] = satAdd(st.bins[0], c)
		return
	}
	lo, hi, ok := st.span()
	if !ok {
		lo, hi = idx, idx
	}
	st.cover(min(lo, idx), max(hi, idx), maxBins)
	i := max(0, idx-st.off)
	st.bins[i] = satAdd(st.bins[i], c)
}

// span returns the lowest and highest non-empty buckets.
func (st *ddStore) span() (lo, hi int, ok bool) {
	i, j := 0, len(st.bins)-1
	for i <= j && st.bins[i] == 0 {
		i++
	}
	if i > j {
		return 0, 0, false
	}
	for st.bins[j] == 0 {
		j--
	}
	return st.off + i, st.off + j, true
}

// cover moves the window so that it covers [lo, hi] (the non-empty buckets
// and the one to add), or, if that spans more than maxBins buckets, the
// top maxBins of them, folding the counts below into the lowest.
func (st *ddStore) cover(lo, hi, maxBins int) {
	width := hi - lo + 1
	if width > maxBins {
		st.rewindow(hi-maxBins+1, maxBins)
		st.collapsed = true
		return
	}
	n := max(len(st.bins), min(maxBins, width+ddGrowSlack))
	st.rewindow(lo-(n-width)/2, n) // centred: room to grow both ways
}

// rewindow makes the window [off, off+n), keeping every count: those below
// off are added to bins[0] (the caller has checked that none lie above).
func (st *ddStore) rewindow(off, n int) {
	var folded uint64
	for i := st.off; i < off && i-st.off < len(st.bins); i++ {
		folded = satAdd(folded, st.bins[i-st.off])
	}
	// The old counts that stay: indexes in both windows.
	var keep []uint64
	dst := 0
	if lo, hi := max(off, st.off), min(off+n, st.off+len(st.bins)); lo < hi {
		keep, dst = st.bins[lo-st.off:hi-st.off], lo-off
	}
	bins := st.bins
	if cap(bins) >= n {
		bins = bins[:cap(bins)]
		copy(bins[dst:], keep) // memmove: keep may overlap
		clear(bins[:dst])
		clear(bins[dst+len(keep) : n])
		bins = bins[:n]
	} else {
		bins = slices.Grow([]uint64(nil), n)[:n]
		copy(bins[dst:], keep)
	}
	bins[0] = satAdd(bins[0], folded)
	st.bins, st.off = bins, off
}

// merge adds the counts of o, exactly (maxBins equal on both sides) but
// for saturation.
func (st *ddStore) merge(o *ddStore, maxBins int) {
	olo, ohi, ok := o.span()
	if !ok {
		return
	}
	if ohi >= st.off+len(st.bins) || olo < st.off && !st.collapsed {
		lo, hi, mine := st.span()
		if !mine {
			lo, hi = olo, ohi
		}
		st.cover(min(lo, olo), max(hi, ohi), maxBins)
	}
	for i := olo; i <= ohi; i++ {
		if c := o.bins[i-o.off]; c != 0 {
			j := max(0, i-st.off)
			st.bins[j] = satAdd(st.bins[j], c)
		}
	}
	st.collapsed = st.collapsed || o.collapsed
}

// reset empties the store, keeping its memory.
func (st *ddStore) reset() {
	clear(st.bins)
	st.collapsed = false
}
