package runtime

import (
	"time"

	"github.com/skewerhq/skewer/runtime/autoscale"
)

// RatesOf returns the rates of the workers of stage over the interval of
// elapsed between two snapshots of the job's metrics (Job.Metrics), for
// an autoscale.Policy: records in and out, and useful time (elapsed less
// the time waiting for input and blocked on output). A worker absent
// from before (a job restored since) counts from zero.
func RatesOf(before, after []WorkerStats, elapsed time.Duration, stage string) autoscale.Rates {
	prev := map[int]WorkerStats{}
	for _, s := range before {
		if s.Stage == stage {
			prev[s.Worker] = s
		}
	}
	r := autoscale.Rates{Elapsed: elapsed}
	for _, s := range after {
		if s.Stage != stage {
			continue
		}
		p := prev[s.Worker]
		in, out := s.In-min(p.In, s.In), s.Out-min(p.Out, s.Out)
		wait := (s.WaitInput - p.WaitInput) + (s.WaitOutput - p.WaitOutput)
		r.Instances = append(r.Instances, autoscale.Instance{In: in, Out: out, Useful: max(elapsed-wait, 0)})
	}
	return r
}
