package partition

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Option configures a partitioner: every constructor, New and NewFactory
// take them, and validate them all in one place (an error wraps
// ErrInvalidParameter and names the option). An option a kind has no use
// for is validated and ignored: WithTheta means nothing to hash.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	theta        float64 // head threshold; 0 means 1/(5n)
	thetaSet     bool
	epsilon      float64
	detector     DetectorFactory // nil: the default
	detectorSet  bool
	resolveEvery int
	autoWindow   int
	autoSample   int
	hashLimit    float64 // predicted hash imbalance Auto accepts
	sources      int
	seed         uint64
	instance     int // the number of a factory's first instance
	// tie is a per-instance salt (0 for instance 0) that decorrelates how
	// sources break ties, so that S sources do not all favour the same
	// workers.
	tie uint64
}

func defaultConfig() config {
	return config{epsilon: 1e-3, resolveEvery: 4096, autoWindow: 1 << 16, autoSample: 4096, hashLimit: DefaultAutoHashLimit, sources: 1}
}

// WithTheta sets the head threshold: keys with probability >= theta are
// head, theta in [MinTheta, 1). Default 1/(5n).
func WithTheta(theta float64) Option {
	return optionFunc(func(c *config) { c.theta, c.thetaSet = theta, true })
}

// WithEpsilon sets the imbalance tolerance D-Choices solves d for. Default 1e-3.
func WithEpsilon(eps float64) Option { return optionFunc(func(c *config) { c.epsilon = eps }) }

// WithDetector sets how head keys are detected: f builds each instance's
// Detector (see Detector for what it must guarantee). By default, two
// windowed Space-Saving summaries behind a row of bucket counters, whose
// window WithSources adjusts; f's detectors are used as they are.
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
// Auto routes by hash (replication 1) rather than PKG: 1e-3, the imbalance
// PKG and D-Choices keep, so that Auto balances as well as the best of
// them. Key grouping's imbalance on a finite stream is rarely that low
// (about sqrt(2 ln n · n Σp²), a few 1e-3 at n = 5 over 10^6 uniform keys),
// and Auto's sample of 4096 keys alone bounds its prediction from below by
// n/4096, so with the default Auto picks PKG where there is no hot key;
// WithAutoHashLimit trades a bounded imbalance for replication 1
// (docs/results/partitioning.md, "Auto on the Zipf grid").
const DefaultAutoHashLimit = 1e-3

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
// hot. With S > 1 the default detector's window W = max(2^14, 64/θ)
// becomes max(1024, W/S) source tuples and Auto's decision window
// max(sample, window/S): the same stretch of the stream as for one source.
// Its effect on real streams: docs/results/partitioning.md, "Several sources with
// WithSources". The price is noisier
// per-window counts (a key at theta is counted 64/S times per window on
// average); the default detector decides head membership over about seven
// windows, with a margin of three standard deviations, so that the noise
// costs little replication, and a key near theta is decided more slowly.
// An explicit WithDetector is left as it is.
func WithSources(s int) Option { return optionFunc(func(c *config) { c.sources = s }) }

// WithInstance numbers the partitioners a Factory builds from i (default
// 0): its k-th breaks ties between equally loaded workers as instance i+k
// does. Instances of one factory already differ; a caller that builds each
// source's partitioner from a factory of its own (a runtime building
// sending worker i's partitioner alone, as runtime.Kind's edges do;
// producers in separate processes) gives source i WithInstance(i), so
// that the sources do not all favour the same workers. i must be >= 0.
func WithInstance(i int) Option { return optionFunc(func(c *config) { c.instance = i }) }

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

// newConfig applies and validates opts.
func newConfig(opts []Option) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return c, invalidParam("option", "nil", "an Option")
		}
		o.apply(&c)
	}
	return c, c.validate()
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
	if c.instance < 0 {
		return invalidParam("instance", c.instance, ">= 0")
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

// kindSpec is one entry of a registry of kinds: build makes it for n workers
// (already checked) and a validated config; splits is whether its
// partitioners may send one key to several workers (SplitsKeys), the same
// for every instance, worker count and option.
type kindSpec struct {
	build  func(n int, c *config) (Partitioner, error)
	splits bool
}

// kinds are the kinds of New and NewFactory.
var kinds = map[string]kindSpec{
	"hash":     {func(n int, _ *config) (Partitioner, error) { return &Hash{n: n}, nil }, false},
	"shuffle":  {func(n int, _ *config) (Partitioner, error) { return newShuffle(n), nil }, true},
	"pkg":      {func(n int, c *config) (Partitioner, error) { return newPKG(n, c.tie), nil }, true},
	"dchoices": {func(n int, c *config) (Partitioner, error) { return newDChoices(n, c, false) }, true},
	"wchoices": {func(n int, c *config) (Partitioner, error) { return newHeadAll(n, c, false) }, true},
	"auto":     {func(n int, c *config) (Partitioner, error) { return newAuto(n, c) }, true},
}

// Kinds lists the partitioner kinds New and NewFactory accept, sorted:
// auto, dchoices, hash, pkg, shuffle and wchoices, each with its typed
// constructor. (The research kinds that docs/results/partitioning.md
// compares them with are package partitionlab's.)
func Kinds() []string { return kindNames(kinds) }

// kindNames lists a registry's kinds, sorted.
func kindNames(reg map[string]kindSpec) []string {
	ks := make([]string, 0, len(reg))
	for k := range reg {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// KindSplitsKeys reports whether the partitioners of a kind (see Kinds)
// may send one key to several workers, as SplitsKeys would report of each
// of them, whatever the worker count and options: every kind but hash. A
// caller that needs to know before it routes (a runtime deciding whether
// an aggregation needs a merge stage) asks here instead of building a
// partitioner to ask. An unknown kind is refused as New refuses it.
func KindSplitsKeys(kind string) (bool, error) {
	k, ok := kinds[kind]
	if !ok {
		return false, unknownKind(kinds, kind)
	}
	return k.splits, nil
}

// unknownKind is the error for a kind reg does not have.
func unknownKind(reg map[string]kindSpec, name string) error {
	return invalidParam("kind", fmt.Sprintf("%q", name), fmt.Sprintf("one of %v", kindNames(reg)))
}

// New builds a partitioner of the named kind (see Kinds) for n workers: the
// string form of the typed constructors, for command lines and
// configuration files.
func New(kind string, workers int, opts ...Option) (Partitioner, error) {
	f, err := NewFactory(kind, opts...)
	if err != nil {
		return nil, err
	}
	return f(workers)
}

// NewFactory validates kind and options once and returns a Factory that
// builds one partitioner per source. Instances of one factory break ties
// between equally loaded workers differently, so that S sources do not all
// favour the same workers (WithInstance numbers them); give it
// WithSources(S).
func NewFactory(kind string, opts ...Option) (Factory, error) {
	return newFactory(kinds, kind, opts)
}

// newFactory is NewFactory over the kinds of reg.
func newFactory(reg map[string]kindSpec, name string, opts []Option) (Factory, error) {
	k, ok := reg[name]
	if !ok {
		return nil, unknownKind(reg, name)
	}
	c, err := newConfig(opts)
	if err != nil {
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
		if i := uint64(c.instance) + instances.Add(1) - 1; i > 0 {
			cc.tie = hashx.Mix64(i) | 1
		}
		p, err := k.build(workers, &cc)
		if err != nil {
			// A builder's typed nil (*dChoices)(nil) would make a
			// non-nil Partitioner beside the error.
			return nil, err
		}
		return p, nil
	}, nil
}

// NewShuffle returns round-robin routing over n workers (kind "shuffle"):
// perfect balance, but every key may reach every worker, so keyed state
// needs a merge of up to n partials per key.
func NewShuffle(workers int, opts ...Option) (Partitioner, error) {
	return New("shuffle", workers, opts...)
}

// NewPKG returns partial key grouping over n workers (kind "pkg"; Nasir et
// al., ICDE 2015): each key has two distinct candidate workers and each
// tuple goes to the one this instance has loaded least. It balances while
// the top key's share p1 <= 2/n (degrading already near 2/n); at most two
// partials per key. It implements Candidater.
//
// A tuple's choice may miss the previous tuple's increment (a one-tuple
// lag that lets consecutive tuples overlap in the CPU): a comparison is off
// by at most one tuple; counts stay exact.
func NewPKG(workers int, opts ...Option) (Partitioner, error) {
	return New("pkg", workers, opts...)
}

// NewDChoices returns D-Choices over n workers (kind "dchoices"; Nasir et
// al., "When two choices are not enough", ICDE 2016): tail keys as PKG, and
// head keys, as the Detector reports them, to the least loaded of d
// distinct candidates, d solved from the head's statistics so that the
// workers stay balanced (docs/partitioning.md, "How D-Choices solves d").
// About d partials per head key, at most two per tail key.
func NewDChoices(workers int, opts ...Option) (Partitioner, error) {
	return New("dchoices", workers, opts...)
}

// NewWChoices returns W-Choices over n workers (kind "wchoices", same
// paper): tail keys as PKG, head keys to the least loaded of all n
// workers. Up to n partials per head key.
func NewWChoices(workers int, opts ...Option) (Partitioner, error) {
	return New("wchoices", workers, opts...)
}

// NewAuto returns a partitioner that measures the stream and routes as
// hash, PKG, D-Choices or W-Choices, switching as the stream changes (kind
// "auto"; docs/partitioning.md, "Auto"). It starts as D-Choices, the mode
// that is safe under unknown skew, and implements Chooser.
func NewAuto(workers int, opts ...Option) (Partitioner, error) {
	return New("auto", workers, opts...)
}
