package operators

import (
	"iter"
	"math"
	"time"
)

// Windows assigns event times to windows [start, end). The zero value is the
// global window: one window holding everything, fired at the end of input.
// Session windows (Sessions) are not assigned by time alone: their bounds
// depend on a key's inputs, so End, LastStart, Starts and Count do not apply
// to them, and they are kept by KeyedSessions rather than KeyedWindows.
//
// Times are int64 nanoseconds, and window bounds saturate at its ends
// rather than wrap, as session bounds do: a window that would end after
// MaxInt64 ends at MaxInt64 (a time at MaxInt64 counts as MaxInt64−1, in
// the windows that reach the top), and the windows that would start at or
// before MinInt64 are one window starting at MinInt64, ending where the
// latest of them ends (their times within int64 are those of the latest).
// So every time is in at least one window, and none is lost or assigned a
// window whose bounds wrapped around.
type Windows struct {
	size, slide int64
	offset      int64 // in [0, slide)
	gap         int64 // session windows only
}

// GlobalWindow is the single window [MinInt64, MaxInt64).
func GlobalWindow() Windows { return Windows{} }

// Tumbling returns back-to-back windows of the given size, aligned to the
// Unix epoch.
func Tumbling(size time.Duration) (Windows, error) { return Sliding(size, size) }

// Sliding returns windows of the given size starting every slide; a time
// falls in size/slide windows when slide divides size, otherwise in
// floor(size/slide) or ceil(size/slide) of them. floor(size/slide) must be
// at most 1024 (so a time falls in at most 1025 windows).
func Sliding(size, slide time.Duration) (Windows, error) {
	switch {
	case size <= 0:
		return Windows{}, invalidParam("size", size, "> 0")
	case slide <= 0 || slide > size:
		return Windows{}, invalidParam("slide", slide, "in (0, size]")
	case size/slide > 1024:
		return Windows{}, invalidParam("size/slide", size/slide, "<= 1024")
	}
	return Windows{size: int64(size), slide: int64(slide)}, nil
}

// Sessions returns session windows with the given gap, as Flink's
// EventTimeSessionWindows: per key, every input at time t covers
// [t, t+gap), and inputs whose intervals overlap (two inputs less than gap
// apart, or a chain of them) form one session [first, last+gap). An input
// that falls between two sessions closer than gap to both bridges them into
// one. Intervals that only touch (inputs exactly gap apart) stay separate
// sessions; Flink merges those too.
func Sessions(gap time.Duration) (Windows, error) {
	if gap <= 0 {
		return Windows{}, invalidParam("gap", gap, "> 0")
	}
	return Windows{gap: int64(gap)}, nil
}

// IsSession reports whether w are session windows.
func (w Windows) IsSession() bool { return w.gap != 0 }

// Gap is the session gap (0 unless w are session windows).
func (w Windows) Gap() time.Duration { return time.Duration(w.gap) }

// WithOffset shifts window starts by offset (modulo slide).
func (w Windows) WithOffset(offset time.Duration) Windows {
	if w.slide != 0 {
		w.offset = int64(offset) % w.slide
		if w.offset < 0 {
			w.offset += w.slide
		}
	}
	return w
}

// IsGlobal reports whether w is the global window.
func (w Windows) IsGlobal() bool { return w.size == 0 && w.gap == 0 }

// Size is the window length (0 for the global window).
func (w Windows) Size() time.Duration { return time.Duration(w.size) }

// Slide is the distance between window starts (0 for the global window).
func (w Windows) Slide() time.Duration { return time.Duration(w.slide) }

// End returns the end of the window starting at start, saturated at
// MaxInt64. The window starting at MinInt64 ends where the latest window
// that would start at or before MinInt64 ends.
func (w Windows) End(start int64) int64 {
	if w.size == 0 {
		return math.MaxInt64
	}
	if start == math.MinInt64 {
		return start + (w.size - w.residue(start)) // residue < slide ≤ size
	}
	return satAdd(start, w.size)
}

// LastStart returns the start of the latest window holding t, saturated at
// MinInt64; Starts yields it and the starts of the other windows holding
// t.
func (w Windows) LastStart(t int64) int64 {
	if w.size == 0 {
		return math.MinInt64
	}
	t = clampTime(t)
	s := t - w.residue(t)
	if s > t { // t - residue went below MinInt64
		return math.MinInt64
	}
	return s
}

// Starts yields the start of every window holding t, latest first: one
// for tumbling windows, up to Count() for sliding ones (fewer within a
// window's size of MinInt64, see Windows), MinInt64 for the global window.
func (w Windows) Starts(t int64) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		if w.size == 0 {
			yield(math.MinInt64)
			return
		}
		t = clampTime(t)
		for s, ok := w.LastStart(t), true; ok && w.End(s) > t; s, ok = w.prevStart(s) {
			if !yield(s) {
				return
			}
		}
	}
}

// prevStart returns the start of the window before the one starting at s,
// and false when there is none: MinInt64 stands for every window that
// would start before it.
func (w Windows) prevStart(s int64) (int64, bool) {
	if s == math.MinInt64 {
		return 0, false
	}
	if s < math.MinInt64+w.slide {
		return math.MinInt64, true
	}
	return s - w.slide, true
}

// residue returns (t - offset) mod slide, in [0, slide), without
// overflow.
func (w Windows) residue(t int64) int64 {
	r := t % w.slide
	if r < 0 {
		r += w.slide
	}
	if r -= w.offset; r < 0 {
		r += w.slide
	}
	return r
}

// clampTime is t, or MaxInt64-1 for t = MaxInt64: no window ends after
// MaxInt64, so none could hold it (session windows do the same).
func clampTime(t int64) int64 { return min(t, math.MaxInt64-1) }

// Count is the most windows any one time falls in: ceil(size/slide).
func (w Windows) Count() int {
	if w.size == 0 {
		return 1
	}
	n := w.size / w.slide
	if w.size%w.slide != 0 {
		n++
	}
	return int(n)
}
