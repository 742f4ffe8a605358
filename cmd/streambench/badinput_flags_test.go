package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// flagNamedInputs are refused command lines whose values bench or the
// sketches would otherwise refuse under another name, or only once the run
// had begun (exit 1): each must be a usage error (exit 2) naming its own
// flag and the range it allows.
var flagNamedInputs = []badInput{
	{"scale -map-cost=-1s", 2, "-map-cost = -1s, want in [0, 1h0m0s]"},
	{"scale -count-cost=2h", 2, "-count-cost = 2h0m0s, want in [0, 1h0m0s]"},
	{"scale -sink-cost=-1ns", 2, "-sink-cost = -1ns, want in [0, 1h0m0s]"},
	{"sketch -delta=5e-324", 2, "-delta = 5e-324, want in [1.6038108905486265e-28, 1) (Count-Min's depth ⌈ln 1/δ⌉ is at most 64 rows)"},
	{"sketch -sketches countmin-cu -delta=1e-28", 2, "-delta = 1e-28, want in [1.6038108905486265e-28, 1)"},
	{"sketch -sketches countmin -epsilon=1e-6 -delta=1e-20", 2,
		"-epsilon = 1e-06, want at least 1.2961777822776056e-06 with -delta = 1e-20 (Count-Min's width e/ε, rounded up to a power of two, times its depth ⌈ln 1/δ⌉ = 47 must fit in 2^27 counters)"},
	{"sketch -sketches lossy -delta=5e-324", 2, "-delta is not used by -sketches lossy (only by countmin, countmin-cu)"},
}

func TestBadInputNamesTheFlag(t *testing.T) {
	runBadInputs(t, flagNamedInputs)
}

// TestCheckCountMinBounds pins that the least -delta and -epsilon
// checkCountMin states are accepted and the next float below is refused,
// and that its -delta bound is the one sketch.NewCountMin enforces.
func TestCheckCountMinBounds(t *testing.T) {
	least := func(err error) float64 {
		t.Helper()
		require.Error(t, err)
		var v float64
		_, scanErr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "want ")+5:], "in [%g,", &v)
		if scanErr != nil {
			_, scanErr = fmt.Sscanf(err.Error()[strings.Index(err.Error(), "want ")+5:], "at least %g", &v)
		}
		require.NoError(t, scanErr, err.Error())
		return v
	}
	d := least(checkCountMin(0.5, 1e-300))
	require.NoError(t, checkCountMin(0.5, d))
	require.Error(t, checkCountMin(0.5, math.Nextafter(d, 0)))
	_, err := sketch.NewCountMin(0.5, d)
	require.NoError(t, err)
	_, err = sketch.NewCountMin(0.5, math.Nextafter(d, 0))
	require.Error(t, err)
	for _, delta := range []float64{0.5, 0.01, 1e-20, d} {
		eps := least(checkCountMin(1e-12, delta))
		require.NoError(t, checkCountMin(eps, delta), "delta %g", delta)
		require.Error(t, checkCountMin(math.Nextafter(eps, 0), delta), "delta %g", delta)
	}
}
