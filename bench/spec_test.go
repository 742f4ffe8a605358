package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseFloats(t *testing.T) {
	got, err := ParseFloats("-zipf-s", "0.1:2.0:0.1")
	require.NoError(t, err)
	require.Len(t, got, 20)
	require.Equal(t, 0.1, got[0])
	require.Equal(t, 0.3, got[2])
	require.Equal(t, 2.0, got[19])

	got, err = ParseFloats("-zipf-s", "1.5, 0.8")
	require.NoError(t, err)
	require.Equal(t, []float64{1.5, 0.8}, got)

	for _, bad := range []string{"", "x", "1:2", "2:1:0.1", "0:1:0", "NaN", "Inf", "1,1", "0.5:1.5:0.5,1"} {
		_, err := ParseFloats("-zipf-s", bad)
		require.ErrorIs(t, err, ErrInvalidParameter, bad)
		require.ErrorContains(t, err, "-zipf-s = ")
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts("-workers", "5,10,50,100", 1, 4096)
	require.NoError(t, err)
	require.Equal(t, []int{5, 10, 50, 100}, got)
	for _, bad := range []string{"5,0", "", "5,,6", "4097", "5,5", "x"} {
		_, err = ParseInts("-workers", bad, 1, 4096)
		require.ErrorIs(t, err, ErrInvalidParameter, bad)
		require.ErrorContains(t, err, "-workers = ", bad)
	}
}

func TestParseChoices(t *testing.T) {
	got, err := ParseChoices("-partitioner", "hash,pkg", []string{"hash", "pkg", "shuffle"})
	require.NoError(t, err)
	require.Equal(t, []string{"hash", "pkg"}, got)
	_, err = ParseChoices("-partitioner", "hash,bogus", []string{"hash", "pkg", "shuffle"})
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, `-partitioner = "bogus", want one of hash, pkg, shuffle`)
	_, err = ParseChoices("-partitioner", "hash,hash", []string{"hash", "pkg", "shuffle"})
	require.ErrorContains(t, err, `-partitioner = hash, want each value at most once`)
}

func TestParseWork(t *testing.T) {
	w, err := ParseWork("model:20us")
	require.NoError(t, err)
	require.Equal(t, Work{Mode: "model", Cost: 20 * time.Microsecond}, w)
	require.Equal(t, "model:20us", w.String())
	w2, err := ParseWork(w.String())
	require.NoError(t, err)
	require.Equal(t, w, w2)
	w, err = ParseWork("none")
	require.NoError(t, err)
	require.Equal(t, "none", w.String())
	for _, bad := range []string{"model", "model:-1us", "model:0s", "sleep:1us", "spin:x", "spin:2ms", "model:2h", ""} {
		_, err := ParseWork(bad)
		require.ErrorIs(t, err, ErrInvalidParameter, bad)
		require.ErrorContains(t, err, "-work = ")
	}
}
