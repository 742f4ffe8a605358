package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/skewerhq/skewer/sketch"
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
// whether latency rose steadily during the run; after KeepDDSketch, also
// in a DDSketch. The zero value is not usable; construct with
// NewLatencyRecorder. A recorder is not safe for concurrent use: give each
// recording goroutine its own and Merge them.
type LatencyRecorder struct {
	h        *hdrhistogram.Histogram
	dd       *sketch.DDSketch // nil unless KeepDDSketch
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

// KeepDDSketch makes r also record every latency, as Record clamps it, in
// a DDSketch of relative accuracy alpha in [1e-4, 0.5], for DDSummary. Its
// bucket limit covers the recorder's whole range, 1 µs to an hour, so no
// bucket is ever collapsed; memory grows with the range of the values
// recorded (log_γ(max/min) buckets of 8 bytes: 1.4 KiB per decade at
// α = 1%). Call it before the first Record.
func (r *LatencyRecorder) KeepDDSketch(alpha float64) error {
	dd, err := newLatencyDDSketch(alpha)
	if err != nil {
		return err
	}
	r.dd = dd
	return nil
}

// Bounds of the latency DDSketch's relative accuracy: below 1e-4 covering
// the recorder's range would take over 10^5 buckets.
const (
	minLatencyAlpha = 1e-4
	maxLatencyAlpha = 0.5
)

// newLatencyDDSketch returns the latency DDSketch of relative accuracy
// alpha with buckets for all of [latencyLowest, latencyHighest], or an
// error naming the flag that sets alpha.
func newLatencyDDSketch(alpha float64) (*sketch.DDSketch, error) {
	if !(alpha >= minLatencyAlpha && alpha <= maxLatencyAlpha) {
		return nil, invalidParam("-latency-ddsketch", alpha, fmt.Sprintf("0 (off) or a relative accuracy in [%g, %g]", minLatencyAlpha, maxLatencyAlpha))
	}
	gamma := (1 + alpha) / (1 - alpha)
	bins := int(math.Ceil(math.Log(float64(latencyHighest)/float64(latencyLowest))/math.Log(gamma))) + 2
	return sketch.NewDDSketch(alpha, bins)
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
	if r.dd != nil {
		_ = r.dd.Add(float64(v)) // finite and positive: cannot fail
	}
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

// Merge adds every value of o into r. Both must use the same slot, and
// keep a DDSketch of the same α or none.
func (r *LatencyRecorder) Merge(o *LatencyRecorder) error {
	if o.slot != r.slot {
		return invalidParam("slot", o.slot, r.slot.String()+" (the receiver's)")
	}
	switch {
	case (r.dd == nil) != (o.dd == nil):
		return invalidParam("o", "a recorder with a DDSketch and one without", "both or neither")
	case r.dd != nil:
		if err := r.dd.Merge(o.dd); err != nil {
			return fmt.Errorf("bench: latency DDSketch: %w", err)
		}
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
	ps := latencyPercentiles // ValueAtPercentiles sorts its argument in place
	v := r.h.ValueAtPercentiles(ps[:])
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

// latencyPercentiles are the percentiles of a LatencySummary.
var latencyPercentiles = [4]float64{50, 95, 99, 99.9}

// DDSummary returns the percentiles of the DDSketch KeepDDSketch started,
// in milliseconds, nil without one (zeros when empty). Each is the
// estimate of the very order statistic HdrHistogram reports (the value of
// 1-based rank max(1, round(p/100·n))), within α of it; HdrHistogram's
// own answer is the top of that value's bucket, within 2^-10 of it above
// (within 1 µs below about 1 ms, where its buckets are 512 ns wide), so
// the two agree within α + 2^-10 relative to HdrHistogram's, or α plus
// 1 µs below 1 ms. Max is the exact largest value.
func (r *LatencyRecorder) DDSummary() *LatencySummary {
	if r.dd == nil {
		return nil
	}
	n := r.dd.N()
	if n == 0 {
		return &LatencySummary{}
	}
	var qs [len(latencyPercentiles)]float64
	for i, p := range latencyPercentiles {
		// 0-based rank j = max(1, round(p/100·n)) - 1 is DDSketch's
		// ⌊q·(n-1)⌋ for q = (j + 0.5)/(n-1), clamped to 1 at the top.
		j := max(1, min(int64(n), int64(p/100*float64(n)+0.5))) - 1
		qs[i] = 1
		if n > 1 {
			qs[i] = min(1, (float64(j)+0.5)/float64(n-1))
		}
	}
	v, _ := r.dd.Quantiles(qs[:]...) // non-empty, ranks in [0, 1]: cannot fail
	ms := func(ns float64) float64 { return ns / 1e6 }
	return &LatencySummary{P50: ms(v[0]), P95: ms(v[1]), P99: ms(v[2]), P999: ms(v[3]), Max: ms(r.dd.Max()), Count: int64(n)}
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
