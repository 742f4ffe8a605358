package autoscale

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// instances is n instances that each took in records in useful time at
// selectivity sel over an interval.
func instances(n int, in uint64, useful time.Duration, sel float64) []Instance {
	out := make([]Instance, n)
	for i := range out {
		out[i] = Instance{In: in, Out: uint64(float64(in) * sel), Useful: useful}
	}
	return out
}

// pipeline is src -> parse -> count -> sink at the given parallelisms.
func pipeline(parse, count, sink int) []Operator {
	return []Operator{
		{Name: "sink", Inputs: []string{"count"}, Parallelism: sink, Max: 16},
		{Name: "src", Parallelism: 2},
		{Name: "count", Inputs: []string{"parse"}, Parallelism: count, Max: 16, Keyed: true},
		{Name: "parse", Inputs: []string{"src"}, Parallelism: parse, Max: 16},
	}
}

// rates are what the pipeline measures over one second when parse costs
// 8 µs, count 22 µs (selectivity 0.01: windowed results) and sink 10 µs
// per record, whatever the load: true rates do not depend on it.
func rates(ops []Operator, observed float64, p1 float64) map[string]Rates {
	r := map[string]Rates{}
	for _, op := range ops {
		cost, sel := map[string]time.Duration{"src": time.Microsecond, "parse": 8 * time.Microsecond, "count": 22 * time.Microsecond, "sink": 10 * time.Microsecond}[op.Name], 1.0
		if op.Name == "count" {
			sel = 0.01
		}
		in := uint64(observed / float64(op.Parallelism))
		if op.Name == "sink" {
			in /= 100
		}
		r[op.Name] = Rates{Elapsed: time.Second, Instances: instances(op.Parallelism, in, time.Duration(in)*cost, sel), TopKeyShare: p1}
	}
	return r
}

// TestDS2SizesEveryOperatorAtOnce: from one interval's true rates, DS2
// sizes every operator for the target in one decision (the optimum: the
// target over one instance's true rate, rounded up), whatever the load
// the rates were measured at, and decides nothing more from the next.
func TestDS2SizesEveryOperatorAtOnce(t *testing.T) {
	ops := pipeline(1, 1, 1)
	plan, err := NewDS2().Decide(ops, rates(ops, 40_000, 0), 200_000)
	require.NoError(t, err)
	// 200k over 125k per parse instance, 45.45k per count instance; the
	// sink gets 1% of it, 2k over 100k.
	require.Equal(t, map[string]int{"src": 2, "parse": 2, "count": 5, "sink": 1}, plan.Parallelism)
	require.True(t, plan.Changes(ops))
	require.Len(t, plan.Reasons, 2)
	for i := range ops {
		ops[i].Parallelism = plan.Parallelism[ops[i].Name]
	}
	again, err := NewDS2().Decide(ops, rates(ops, 200_000, 0), 200_000)
	require.NoError(t, err)
	require.False(t, again.Changes(ops), "converged: %v", again.Reasons)
	down, err := NewDS2().Decide(ops, rates(ops, 200_000, 0), 50_000)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"src": 2, "parse": 1, "count": 2, "sink": 1}, down.Parallelism)
}

// TestDS2Skew: a hot key that one instance cannot take at the target
// makes the skew-aware policy split the operator's keys (and say why);
// plain DS2 sizes it as if the load were even. The split ends once the
// hot key fits in half an instance.
func TestDS2Skew(t *testing.T) {
	ops := pipeline(2, 5, 1)
	plain, err := NewDS2().Decide(ops, rates(ops, 117_000, 0.39), 200_000)
	require.NoError(t, err)
	require.False(t, plain.Split["count"])
	require.Equal(t, 5, plain.Parallelism["count"])

	skew, err := NewDS2Skew().Decide(ops, rates(ops, 117_000, 0.39), 200_000)
	require.NoError(t, err)
	require.True(t, skew.Split["count"])
	require.Equal(t, 5, skew.Parallelism["count"])
	require.Contains(t, skew.Reasons[0], "split its keys")

	ops[2].Split = true
	kept, err := NewDS2Skew().Decide(ops, rates(ops, 200_000, 0.39), 200_000)
	require.NoError(t, err)
	require.True(t, kept.Split["count"], "still hot")
	low, err := NewDS2Skew().Decide(ops, rates(ops, 200_000, 0.39), 40_000)
	require.NoError(t, err)
	require.False(t, low.Split["count"], "0.39 of 40k is under half an instance")
	require.Equal(t, 1, low.Parallelism["count"])

	// A share that fell (a drifting hot set, read over one interval):
	// 0.047 of 200k is under half an instance, but together the keys
	// would take 6 instances of 45.45k against 5 split. They stay split.
	cooler, err := NewDS2Skew().Decide(ops, rates(ops, 200_000, 0.047), 200_000)
	require.NoError(t, err)
	require.True(t, cooler.Split["count"], "%v", cooler.Reasons)
	require.Equal(t, 5, cooler.Parallelism["count"])
	ops[2].Split = false
	// Kept together the same keys take 6, not twice 5: they stay together.
	together, err := NewDS2Skew().Decide(ops, rates(ops, 200_000, 0.047), 200_000)
	require.NoError(t, err)
	require.False(t, together.Split["count"], "%v", together.Reasons)
	require.Equal(t, 6, together.Parallelism["count"])
}

func TestThreshold(t *testing.T) {
	p, err := NewThreshold(0, 0)
	require.NoError(t, err)
	ops := pipeline(1, 2, 1)
	r := map[string]Rates{
		"src":   {Elapsed: time.Second, Instances: instances(2, 1000, 10*time.Millisecond, 1)},
		"parse": {Elapsed: time.Second, Instances: instances(1, 1000, 900*time.Millisecond, 1)},
		"count": {Elapsed: time.Second, Instances: instances(2, 1000, 100*time.Millisecond, 1)},
		"sink":  {Elapsed: time.Second, Instances: instances(1, 1000, 500*time.Millisecond, 1)},
	}
	plan, err := p.Decide(ops, r, 0)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"src": 2, "parse": 2, "count": 1, "sink": 1}, plan.Parallelism)
	ops[2].Parallelism = 1
	plan, err = p.Decide(ops, r, 0)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Parallelism["count"], "never below one")
	for _, bad := range [][2]float64{{0.3, 0.8}, {1.5, 0.2}, {0.5, 0}} {
		_, err := NewThreshold(bad[0], bad[1])
		require.ErrorIs(t, err, ErrInvalidParameter, "%v", bad)
	}
}

func TestPlanErrors(t *testing.T) {
	p := NewDS2()
	for name, ops := range map[string][]Operator{
		"unknown input": {{Name: "a", Inputs: []string{"b"}, Parallelism: 1}},
		"cycle":         {{Name: "a", Inputs: []string{"b"}, Parallelism: 1}, {Name: "b", Inputs: []string{"a"}, Parallelism: 1}},
		"duplicate":     {{Name: "a", Parallelism: 1}, {Name: "a", Parallelism: 1}},
		"no name":       {{Parallelism: 1}},
		"parallelism":   {{Name: "a"}},
	} {
		_, err := p.Decide(ops, nil, 1)
		require.ErrorIs(t, err, ErrInvalidParameter, name)
	}
	_, err := p.Decide(nil, nil, -1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = New("pid")
	require.ErrorContains(t, err, `policy "pid"`)
	for _, name := range Policies {
		q, err := New(name)
		require.NoError(t, err)
		require.Equal(t, name, q.Name())
	}
}

// TestDS2SkewSizesTheHotInstance: a hot key that fits one instance still
// shares it with its part of the other keys, so the skew-aware policy
// sizes the operator for that instance (plain DS2 for an even split), and
// splits the keys when that would take more instances than allowed.
func TestDS2SkewSizesTheHotInstance(t *testing.T) {
	ops := pipeline(1, 1, 1)
	plain, err := NewDS2().Decide(ops, rates(ops, 20_000, 0.39), 80_000)
	require.NoError(t, err)
	require.Equal(t, 2, plain.Parallelism["count"], "80k over 45.45k")
	skew, err := NewDS2Skew().Decide(ops, rates(ops, 20_000, 0.39), 80_000)
	require.NoError(t, err)
	// 0.39·80k = 31.2k on the hot instance, plus 0.61·80k/n: n = 4.
	require.Equal(t, 4, skew.Parallelism["count"])
	require.False(t, skew.Split["count"])
	require.Contains(t, skew.Reasons[len(skew.Reasons)-2], "4 instances, not 2")
	far, err := NewDS2Skew().Decide(ops, rates(ops, 20_000, 0.39), 110_000)
	require.NoError(t, err)
	require.True(t, far.Split["count"], "42.9k of 45.45k on one instance: 27 instances to keep it")
	require.Contains(t, far.Reasons[len(far.Reasons)-2], "more than its 16 instances at most")
	require.Equal(t, 3, far.Parallelism["count"])
	// 0.39·95k = 37k: 7 instances together against 3 split, more than twice.
	twice, err := NewDS2Skew().Decide(ops, rates(ops, 20_000, 0.39), 95_000)
	require.NoError(t, err)
	require.True(t, twice.Split["count"], "%v", twice.Reasons)
	require.Contains(t, twice.Reasons[len(twice.Reasons)-2], "split its keys")
	require.Equal(t, 3, twice.Parallelism["count"])
}

func TestRates(t *testing.T) {
	r := Rates{Elapsed: time.Second, Instances: []Instance{{In: 1000, Out: 10, Useful: 250 * time.Millisecond}, {In: 500, Useful: time.Second}}}
	rate, ok := r.TrueRate()
	require.True(t, ok)
	require.InDelta(t, (4000+500)/2.0, rate, 1e-9)
	require.InDelta(t, 1500, r.Observed(), 1e-9)
	require.InDelta(t, 10.0/1500, r.Selectivity(), 1e-12)
	require.InDelta(t, 0.625, r.Busy(), 1e-12)
	_, ok = Rates{}.TrueRate()
	require.False(t, ok)
}
