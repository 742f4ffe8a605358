package main

import (
	"context"
	"fmt"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "forgetting", summary: "two alternating windows against decayed counts, on a moving hot key", run: forgettingCmd})
}

func forgettingCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "forgetting", `Compares how two strategies forget, on a stream whose hot key (at each
-rate) moves at the middle while the old one cools to θ/10, over a uniform
background of 10^4 keys, with a steady key at 1.5θ throughout: two
alternating summaries of exact counts, each reset every 2W tuples and
staggered by W (the partitioners' detectors), against counts halved every
W tuples. Per strategy, rate and seed: tuples after the move until the new
hot key is head (detect) and until the old one is last head (release),
and how often the steady key flapped from head to tail before the move.
Deterministic. An interrupt (SIGINT, SIGTERM) prints the rows so far.`)
	var (
		o      output
		theta  float64
		window int
		tuples int
		rates  string
		seeds  string
	)
	o.register(fs, false)
	fs.Float64Var(&theta, "theta", 0.01, "head threshold θ")
	fs.IntVar(&window, "window", 8192, "window W in tuples")
	fs.IntVar(&tuples, "tuples", 400_000, "records per stream; the hot key moves at the middle")
	fs.StringVar(&rates, "rate", "0.02,0.1", "rates of the hot key, a comma `LIST`")
	fs.StringVar(&seeds, "seeds", "0,1,2", "stream seeds, a comma `LIST`")
	if st, stop := parse(fs, args); stop {
		return st
	}
	cfg := bench.ForgettingConfig{Theta: theta, Window: window, Tuples: tuples}
	var err error
	if cfg.Rates, err = bench.ParseFloats("-rate", rates); err != nil {
		return fail(e, "forgetting", err)
	}
	ss, err := bench.ParseInts("-seeds", seeds, 0, 1<<62)
	if err != nil {
		return fail(e, "forgetting", err)
	}
	for _, s := range ss {
		cfg.Seeds = append(cfg.Seeds, uint64(s))
	}
	rows, err := bench.RunForgetting(ctx, cfg)
	if err != nil && ctx.Err() == nil {
		return fail(e, "forgetting", err)
	}
	meta := bench.Meta{Command: "forgetting", Settings: [][2]string{{"theta", fmt.Sprint(theta)}, {"window", fmt.Sprint(window)}, {"tuples", fmt.Sprint(tuples)}}}
	if err := o.write(ctx, e, meta, bench.ForgettingRows(rows), nil); err != nil {
		return fail(e, "forgetting", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "forgetting", len(rows))
	}
	return exitOK
}
