package partition

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Option configures a partitioner built by New or NewFactory.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	theta        float64 // head threshold; 0 means 1/(5n)
	thetaSet     bool
	epsilon      float64
	detector     DetectorFactory
	detectorSet  bool
	resolveEvery int
	autoWindow   int
	autoSample   int
	hashLimit    float64 // predicted hash imbalance Auto accepts
	sources      int
	seed         uint64
	// tie is a per-instance salt (0 for a factory's first instance) that
	// decorrelates how sources break ties, so that S sources do not all
	// favour the same workers.
	tie uint64
}

func defaultConfig() config {
	return config{epsilon: 1e-3, detector: DefaultDetector, resolveEvery: 4096, autoWindow: 1 << 16, autoSample: 4096, hashLimit: DefaultAutoHashLimit, sources: 1}
}

// WithTheta sets the head threshold: keys with probability >= theta are
// head, theta in [MinTheta, 1). Default 1/(5n).
func WithTheta(theta float64) Option {
	return optionFunc(func(c *config) { c.theta, c.thetaSet = theta, true })
}

// WithEpsilon sets the imbalance tolerance D-Choices solves d for. Default 1e-3.
func WithEpsilon(eps float64) Option { return optionFunc(func(c *config) { c.epsilon = eps }) }

// WithDetector sets how head keys are detected. Default DefaultDetector.
func WithDetector(f DetectorFactory) Option {
	return optionFunc(func(c *config) { c.detector, c.detectorSet = f, true })
}

// WithResolveEvery sets how many tuples pass between D-Choices' re-solving
// of d (and Auto's re-evaluation of its choice). Default 4096.
func WithResolveEvery(tuples int) Option {
	return optionFunc(func(c *config) { c.resolveEvery = tuples })
}

// WithAutoWindow sets how many tuples Auto observes between decisions, and
// the size of its reservoir sample. Defaults 65536 and 4096.
func WithAutoWindow(tuples, sample int) Option {
	return optionFunc(func(c *config) { c.autoWindow, c.autoSample = tuples, sample })
}

// DefaultAutoHashLimit is the predicted key-grouping imbalance up to which
// Auto routes by hash (replication 1) rather than PKG: a bounded imbalance
// traded for no replication and no merge stage (docs/results.md, "Auto on
// the Zipf grid", shows where Auto picks hash and what it costs).
const DefaultAutoHashLimit = 0.05

// WithAutoHashLimit sets the predicted key-grouping imbalance up to which
// Auto routes by hash: lambda ≈ sqrt(2 ln n · n · Σp²) + n·p1 from its
// sample. Hash keeps every key on one worker (no merge stage needed, no
// replication); PKG balances to about 1e-3 at low skew but sends most keys
// to two workers. 0 never picks hash; a larger limit accepts more imbalance
// to keep replication at 1. It must lie in [0, 1). Default
// DefaultAutoHashLimit.
func WithAutoHashLimit(lambda float64) Option {
	return optionFunc(func(c *config) { c.hashLimit = lambda })
}

// WithSources says how many sources share the stream, one partitioner
// instance each, as a Factory builds them (default 1). Each source sees
// about 1/S of the tuples, so a window counted in one source's tuples spans
// S times more of the stream and reacts S times later to a key that turns
// hot. With S > 1 the default detector's window becomes
// max(1024, DefaultWindow(theta)/S) source tuples and Auto's decision window
// max(sample, window/S): the same stretch of the stream as for one source.
// Its effect on real streams: docs/results.md, "Several sources with
// WithSources". The price is noisier
// per-window counts (a key at theta is counted 64/S times per window on
// average), hence more false heads and more replication. An explicit
// WithDetector is left as it is.
func WithSources(s int) Option { return optionFunc(func(c *config) { c.sources = s }) }

// WithSeed seeds the randomness of partitioners that use any (Auto's
// reservoir). Default 0.
func WithSeed(seed uint64) Option { return optionFunc(func(c *config) { c.seed = seed }) }

// MinTheta is the smallest head threshold partitioners and detectors
// accept: the default 1/(5n) at MaxWorkers workers. The sketch detectors
// hold O(1/theta) counters (the default one 64/theta bucket counters and
// 8/theta Space-Saving counters per summary), so the bound caps their
// memory at what a partitioner needs at MaxWorkers.
const MinTheta = 1.0 / (5 * MaxWorkers)

func checkTheta(theta float64) error {
	if !(theta >= MinTheta && theta < 1) {
		return invalidParam("theta", theta, fmt.Sprintf("in [MinTheta = %g, 1)", MinTheta))
	}
	return nil
}

// validate checks every option once, for all kinds.
func (c *config) validate() error {
	if c.thetaSet {
		if err := checkTheta(c.theta); err != nil {
			return err
		}
	}
	if !(c.epsilon > 0 && c.epsilon < 1) {
		return invalidParam("epsilon", c.epsilon, "in (0, 1)")
	}
	if c.detectorSet && c.detector == nil {
		return invalidParam("detector", "nil", "a DetectorFactory")
	}
	if c.resolveEvery <= 0 {
		return invalidParam("resolveEvery", c.resolveEvery, "> 0")
	}
	if c.autoWindow <= 0 {
		return invalidParam("autoWindow", c.autoWindow, "> 0")
	}
	if !(c.hashLimit >= 0 && c.hashLimit < 1) {
		return invalidParam("autoHashLimit", c.hashLimit, "in [0, 1)")
	}
	if c.sources < 1 {
		return invalidParam("sources", c.sources, ">= 1")
	}
	if c.autoSample < 16 {
		return invalidParam("autoSample", c.autoSample, ">= 16")
	}
	return nil
}

// thetaFor returns the head threshold for n workers.
func (c *config) thetaFor(n int) float64 {
	if c.thetaSet {
		return c.theta
	}
	return 1 / (5 * float64(n))
}

// autoWindowFor is Auto's decision window: WithAutoWindow's, divided by
// the sources of WithSources (at least the sample) when there are several.
func (c *config) autoWindowFor() int {
	if c.sources <= 1 {
		return c.autoWindow
	}
	return max(c.autoSample, c.autoWindow/c.sources)
}

// minSourceWindow is the smallest window WithSources shrinks the default
// detector's to.
const minSourceWindow = 1024

func (c *config) newDetector(n int) (HotKeyDetector, error) {
	if !c.detectorSet && c.sources > 1 {
		theta := c.thetaFor(n)
		return NewFilteredSpaceSavingDetector(theta, max(minSourceWindow, DefaultWindow(theta)/c.sources))
	}
	d, err := c.detector(n, c.thetaFor(n))
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, invalidParam("detector", "factory returned nil", "a HotKeyDetector")
	}
	return d, nil
}

var kinds = map[string]func(n int, c *config) (Partitioner, error){
	"hash":    func(n int, _ *config) (Partitioner, error) { return NewHash(n) },
	"shuffle": func(n int, _ *config) (Partitioner, error) { return NewShuffle(n) },
	"pkg": func(n int, c *config) (Partitioner, error) {
		p, err := NewPKG(n)
		if err == nil {
			p.tie = c.tie
		}
		return p, err
	},
	"dchoices": func(n int, c *config) (Partitioner, error) {
		return newDChoices(n, c, false)
	},
	"dchoices-paper": func(n int, c *config) (Partitioner, error) {
		return newDChoices(n, c, true)
	},
	"wchoices": func(n int, c *config) (Partitioner, error) { return newHeadAll(n, c, false) },
	"rr-head":  func(n int, c *config) (Partitioner, error) { return newHeadAll(n, c, true) },
	"auto":     func(n int, c *config) (Partitioner, error) { return newAuto(n, c) },
}

// Kinds lists the partitioner kinds New accepts, sorted.
func Kinds() []string {
	ks := make([]string, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// New builds a partitioner of the named kind (see Kinds) for n workers.
func New(kind string, workers int, opts ...Option) (Partitioner, error) {
	f, err := NewFactory(kind, opts...)
	if err != nil {
		return nil, err
	}
	return f(workers)
}

// NewFactory validates kind and options once and returns a Factory that
// builds one partitioner per source.
func NewFactory(kind string, opts ...Option) (Factory, error) {
	mk, ok := kinds[kind]
	if !ok {
		return nil, invalidParam("kind", fmt.Sprintf("%q", kind), fmt.Sprintf("one of %v", Kinds()))
	}
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalidParam("option", "nil", "an Option")
		}
		o.apply(&c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	var instances atomic.Uint64
	return func(workers int) (Partitioner, error) {
		if err := checkWorkers(workers); err != nil {
			return nil, err
		}
		if c.thetaSet && c.theta <= 0 {
			return nil, invalidParam("theta", c.theta, "in (0, 1)")
		}
		cc := c
		if i := instances.Add(1) - 1; i > 0 {
			cc.tie = hashx.Mix64(i) | 1
		}
		return mk(workers, &cc)
	}, nil
}
