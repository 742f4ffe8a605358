package runtime

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// RateStep is one step of a RateSchedule: from At (since the schedule's
// epoch) on, PerSecond records per second.
type RateStep struct {
	At        time.Duration
	PerSecond float64
}

// RateSchedule makes each of a source's streams open-loop on a schedule
// that starts at epoch: from steps[i].At after epoch until the next step,
// steps[i].PerSecond records per second; the last step lasts for ever.
// Record k of a stream is due when the schedule has offered k+1 records,
// and is stamped with that ingest time, whether or not the pipeline keeps
// up. Unlike Rate, which restarts with the job, the schedule is the
// epoch's: a source restored from a checkpoint goes on from its position,
// and the records due while the job was stopped are due at once (the
// backlog a rescale leaves). Steps start at 0, in increasing order of At,
// with finite rates >= 0; a schedule that breaks that fails the job's
// build with ErrInvalidParameter naming RateSchedule.
func RateSchedule(epoch time.Time, steps ...RateStep) SourceOpt {
	return sourceOpt(func(c *stageConfig) { c.schedule = &rateSchedule{steps: steps, epoch: epoch, fromEpoch: true} })
}

// rateSchedule is the open-loop schedule of a source's streams (Rate,
// RateSchedule): cum[i] records are offered by steps[i].At.
type rateSchedule struct {
	steps []RateStep
	cum   []float64
	epoch time.Time
	// fromEpoch: the schedule is RateSchedule's (a restored source goes
	// on from its position); else Rate's, which starts with the job.
	fromEpoch bool
}

func (s *rateSchedule) validate() error {
	if len(s.steps) == 0 || s.steps[0].At != 0 {
		return invalidParam("RateSchedule steps", s.steps, "a first step at 0")
	}
	s.cum = make([]float64, len(s.steps))
	for i, st := range s.steps {
		if !(st.PerSecond >= 0) || math.IsInf(st.PerSecond, 1) {
			return invalidParam(fmt.Sprintf("RateSchedule steps[%d].PerSecond", i), st.PerSecond, "a finite rate >= 0")
		}
		if i > 0 {
			prev := s.steps[i-1]
			if st.At <= prev.At {
				return invalidParam(fmt.Sprintf("RateSchedule steps[%d].At", i), st.At, fmt.Sprintf("after steps[%d].At = %v", i-1, prev.At))
			}
			s.cum[i] = s.cum[i-1] + prev.PerSecond*(st.At-prev.At).Seconds()
		}
	}
	return nil
}

// offered is the number of records the schedule has offered by t since
// its epoch (fractional).
func (s *rateSchedule) offered(t time.Duration) float64 {
	if t < 0 {
		return 0
	}
	i := sort.Search(len(s.steps), func(i int) bool { return s.steps[i].At > t }) - 1
	return s.cum[i] + s.steps[i].PerSecond*(t-s.steps[i].At).Seconds()
}

// due is the time since the epoch at which record k is due, rounded up to
// the nanosecond (so that offered(due(k)) covers k), or MaxInt64 for a
// record the schedule never offers (it ends at rate 0).
func (s *rateSchedule) due(k int64) time.Duration {
	x := float64(k)
	i := sort.Search(len(s.cum), func(i int) bool { return s.cum[i] > x }) - 1
	for ; i < len(s.steps); i++ {
		st := s.steps[i]
		end := math.Inf(1)
		if i+1 < len(s.steps) {
			end = s.cum[i+1]
		}
		if st.PerSecond > 0 && x < end {
			return st.At + time.Duration(math.Ceil((x-s.cum[i])/st.PerSecond*1e9))
		}
	}
	return math.MaxInt64
}
