package bench

import (
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency bounds of the recorder: values are kept in nanoseconds with three
// significant digits from 1 µs to one hour; longer values are clamped to the
// top and counted in Overflow.
const (
	latencyLowest  = int64(time.Microsecond)
	latencyHighest = int64(time.Hour)
	latencyDigits  = 3
)

// LatencySummary is a latency distribution in milliseconds, as printed and
// encoded (JSON field latency_ms).
type LatencySummary struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	// Count is the number of latencies recorded.
	Count int64 `json:"count"`
}

// LatencyRecorder accumulates latencies in an HdrHistogram and, alongside,
// the mean latency per fixed slot of run time, from which Trend tells
// whether latency rose steadily during the run. The zero value is not
// usable; construct with NewLatencyRecorder. A recorder is not safe for
// concurrent use: give each recording goroutine its own and Merge them.
type LatencyRecorder struct {
	h        *hdrhistogram.Histogram
	slot     time.Duration
	sums     []float64 // per slot: sum of latencies, ns
	counts   []int64   // per slot: number of latencies
	overflow int64
}

// NewLatencyRecorder returns an empty recorder whose trend series has one
// point per slot of run time (slot > 0).
func NewLatencyRecorder(slot time.Duration) (*LatencyRecorder, error) {
	if slot <= 0 {
		return nil, invalidParam("slot", slot, "> 0")
	}
	return &LatencyRecorder{
		h:    hdrhistogram.New(latencyLowest, latencyHighest, latencyDigits),
		slot: slot,
	}, nil
}

// Record adds one latency observed at run time at (time since the run
// started; it places the value in the trend series). Values below 1 µs,
// negative ones included, count as 1 µs.
func (r *LatencyRecorder) Record(at, latency time.Duration) {
	v := int64(latency)
	if v < latencyLowest {
		v = latencyLowest
	}
	if v > latencyHighest {
		v = latencyHighest
		r.overflow++
	}
	// The value is within the histogram's range, so RecordValue cannot fail.
	_ = r.h.RecordValue(v)
	if at < 0 {
		at = 0
	}
	i := int(at / r.slot)
	for len(r.sums) <= i {
		r.sums = append(r.sums, 0)
		r.counts = append(r.counts, 0)
	}
	r.sums[i] += float64(v)
	r.counts[i]++
}

// Merge adds every value of o into r. Both must use the same slot.
func (r *LatencyRecorder) Merge(o *LatencyRecorder) error {
	if o.slot != r.slot {
		return invalidParam("slot", o.slot, r.slot.String()+" (the receiver's)")
	}
	r.h.Merge(o.h)
	for len(r.sums) < len(o.sums) {
		r.sums = append(r.sums, 0)
		r.counts = append(r.counts, 0)
	}
	for i := range o.sums {
		r.sums[i] += o.sums[i]
		r.counts[i] += o.counts[i]
	}
	r.overflow += o.overflow
	return nil
}

// Count is the number of values recorded.
func (r *LatencyRecorder) Count() int64 { return r.h.TotalCount() }

// Overflow is the number of values above one hour, recorded as one hour.
func (r *LatencyRecorder) Overflow() int64 { return r.overflow }

// Summary returns the percentiles in milliseconds (zeros when empty).
func (r *LatencyRecorder) Summary() LatencySummary {
	if r.h.TotalCount() == 0 {
		return LatencySummary{}
	}
	v := r.h.ValueAtPercentiles([]float64{50, 95, 99, 99.9})
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return LatencySummary{
		P50:   ms(v[50]),
		P95:   ms(v[95]),
		P99:   ms(v[99]),
		P999:  ms(v[99.9]),
		Max:   ms(r.h.Max()),
		Count: r.h.TotalCount(),
	}
}

// Series returns the mean latency of each non-empty slot: x is the slot's
// middle in seconds of run time, y the mean latency in seconds.
func (r *LatencyRecorder) Series() (x, y []float64) {
	for i, n := range r.counts {
		if n == 0 {
			continue
		}
		x = append(x, (float64(i)+0.5)*r.slot.Seconds())
		y = append(y, r.sums[i]/float64(n)/1e9)
	}
	return x, y
}

// Trend fits a line to Series with the Theil–Sen estimator (the median of
// the slopes between every pair of points), which a few slots spiked by a
// collection or a scheduling hiccup cannot tilt, and returns its slope
// (seconds of latency gained per second of run: 0 for a steady system,
// about 1 - capacity/offered for one whose queues grow) and the rise it
// implies over the span of the series. With fewer than three points it
// returns zeros.
func (r *LatencyRecorder) Trend() (slope float64, rise time.Duration) {
	x, y := r.Series()
	if len(x) < 3 {
		return 0, 0
	}
	slopes := make([]float64, 0, len(x)*(len(x)-1)/2)
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
		}
	}
	slices.Sort(slopes)
	n := len(slopes)
	slope = slopes[n/2]
	if n%2 == 0 {
		slope = (slopes[n/2-1] + slopes[n/2]) / 2
	}
	span := x[len(x)-1] - x[0]
	return slope, time.Duration(math.Round(slope * span * 1e9))
}
