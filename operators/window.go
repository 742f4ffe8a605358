package operators

import (
	"math"
	"time"
)

// Windows assigns event times to windows [start, end). The zero value is the
// global window: one window holding everything, fired at the end of input.
// Session windows (Sessions) are not assigned by time alone: their bounds
// depend on a key's inputs, so End, LastStart and Count do not apply to
// them, and they are kept by KeyedSessions rather than KeyedWindows.
type Windows struct {
	size, slide, offset int64
	gap                 int64 // session windows only
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
	}
	return w
}

// IsGlobal reports whether w is the global window.
func (w Windows) IsGlobal() bool { return w.size == 0 && w.gap == 0 }

// Size is the window length (0 for the global window).
func (w Windows) Size() time.Duration { return time.Duration(w.size) }

// Slide is the distance between window starts (0 for the global window).
func (w Windows) Slide() time.Duration { return time.Duration(w.slide) }

// End returns the end of the window starting at start.
func (w Windows) End(start int64) int64 {
	if w.size == 0 {
		return math.MaxInt64
	}
	return start + w.size
}

// LastStart returns the start of the latest window holding t; the windows
// holding t start at LastStart(t) - i*slide while start > t - size.
func (w Windows) LastStart(t int64) int64 {
	if w.size == 0 {
		return math.MinInt64
	}
	r := (t - w.offset) % w.slide
	if r < 0 {
		r += w.slide
	}
	return t - r
}

// Count is the most windows any one time falls in: ceil(size/slide).
func (w Windows) Count() int {
	if w.size == 0 {
		return 1
	}
	return int((w.size + w.slide - 1) / w.slide)
}
