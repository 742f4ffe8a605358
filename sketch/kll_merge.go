package sketch

import "cmp"

// Merge adds the items summarised by o to s, leaving o unchanged; s may be
// o. Sketches of any k merge: s keeps its own k, and its error bound becomes
// that of the smallest k merged into it ([KLL.NormalizedRankError]). The
// bound holds for the merged sketch as for one fed the concatenated stream
// (Agarwal et al., "Mergeable summaries", 2012). Merge allocates a work
// buffer of the two sketches' retained size.
func (s *KLL[T]) Merge(o *KLL[T]) error {
	if o == nil {
		return invalidParam("o", "nil", "a *KLL")
	}
	if o.n == 0 {
		return nil
	}
	if o == s {
		o = o.Clone()
	}
	s.ensure()
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	n := s.n + o.n
	for _, x := range o.level(0) {
		s.insert(x)
	}
	if o.Levels() > 1 {
		s.mergeUpper(o)
		s.minK = min(s.minK, o.minK)
	}
	s.n = n
	return nil
}

// mergeUpper merges the levels h >= 1 of o into s, level by level, and
// compresses the result bottom-up (DataSketches' general compress): while
// the sketch holds at least its total capacity, each level at or over its
// own capacity is compacted into the next, adding levels on top as needed.
func (s *KLL[T]) mergeUpper(o *KLL[T]) {
	levels := max(s.Levels(), o.Levels())
	work := make([]T, s.Retained()+o.Retained()-len(o.level(0)))
	wl := make([]uint32, levels+1, levels+4)
	w := copy(work, s.level(0))
	wl[1] = uint32(w)
	for h := 1; h < levels; h++ {
		w += kllMergeRuns(work[w:], s.level(h), o.level(h))
		wl[h+1] = uint32(w)
	}
	count, target := w, kllCapacity(s.k, levels)
	out := 0 // levels below h are final in work[:out]
	for h := 0; h < levels; h++ {
		beg, end := int(wl[h]), int(wl[h+1])
		keep := end - beg
		if count >= target && keep >= kllLevelCap(s.k, levels, h) {
			if h == levels-1 {
				wl = append(wl, wl[levels])
				levels++
				target += kllLevelCap(s.k, levels, 0)
			}
			if h == 0 {
				kllSort(work[beg:end])
			}
			half := kllCompact(work, beg, end, int(wl[h+2]), s.coins.flip())
			count -= half
			wl[h+1] = uint32(end - half)
			keep &= 1 // the leftover of an odd level, at work[beg]
		}
		copy(work[out:], work[beg:beg+keep])
		wl[h] = uint32(out)
		out += keep
	}
	wl[levels] = uint32(out)

	s.setLevels(levels)
	size := s.full
	if cap(s.items) >= size {
		s.items = s.items[:size]
	} else {
		s.items = make([]T, size)
	}
	free := size - out
	copy(s.items[free:], work[:out])
	s.lv = append(s.lv[:0], wl...)
	for i := range s.lv {
		s.lv[i] += uint32(free)
	}
}

// kllMergeRuns merges the sorted runs a and b into dst (taking a's item
// first on ties) and returns their total length. dst may overlap a and b
// as long as each write lands at or before the next unread item of both
// (kllCompact's in-place merge).
func kllMergeRuns[T cmp.Ordered](dst, a, b []T) int {
	i, j, w := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[w] = b[j]
			j++
		} else {
			dst[w] = a[i]
			i++
		}
		w++
	}
	w += copy(dst[w:], a[i:])
	w += copy(dst[w:], b[j:])
	return w
}
