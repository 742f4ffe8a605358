package observe

import (
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skewerhq/skewer/runtime"
)

// Current is the job a collector and a live view show, for a harness
// that runs job after job (streambench's sweeps run one per
// configuration): Set replaces it, and the next scrape or poll reads the
// new one. The zero Current shows nothing until the first Set. It is safe
// for concurrent use.
type Current struct {
	p atomic.Pointer[shown]
}

type shown struct {
	job   *runtime.Job
	label string
}

// Set makes job (nil: none) the one shown, with a label naming it on the
// page (a configuration: "dchoices, 8 workers").
func (c *Current) Set(job *runtime.Job, label string) {
	c.p.Store(&shown{job: job, label: label})
}

func (c *Current) get() (*runtime.Job, string) {
	s := c.p.Load()
	if s == nil {
		return nil, ""
	}
	return s.job, s.label
}

// Collector returns a collector of the current job's metrics (none while
// there is no job); opts are NewJobCollector's.
func (c *Current) Collector(opts ...CollectorOpt) (*JobCollector, error) {
	return newCollector(func() *runtime.Job { j, _ := c.get(); return j }, opts)
}

// Handler returns the live view (see Handler) of the current job.
func (c *Current) Handler(gatherer prometheus.Gatherer) http.Handler {
	return handler(c.get, gatherer)
}
