package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

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
