package operators

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type sale struct {
	shop   string
	amount int64
}

// TestWithKey pins the wrapper's contract: the first record names the
// accumulator, Merge keeps a named side's key whichever side is empty, the
// result carries the key and the wrapped result, and a split key's partial
// accumulators merge to what one accumulator gives.
func TestWithKey(t *testing.T) {
	byShop, err := WithKey(Sum(func(s sale) int64 { return s.amount }), func(s sale) string { return s.shop })
	require.NoError(t, err)
	require.NoError(t, byShop.Validate())

	empty := byShop.Create()
	require.False(t, empty.Named)
	one := byShop.Add(byShop.Create(), sale{"north", 3})
	require.Equal(t, NamedAcc[string, int64]{Key: "north", Acc: 3, Named: true}, one)
	one = byShop.Add(one, sale{"north", 4})
	require.Equal(t, Named[string, int64]{Key: "north", Value: 7}, byShop.Result(one))

	require.Equal(t, one, byShop.Merge(byShop.Create(), one), "an empty left side takes the named one's key")
	require.Equal(t, one, byShop.Merge(one, byShop.Create()), "an empty right side changes nothing")

	all := byShop.Create()
	a, b := byShop.Create(), byShop.Create()
	for i, s := range []sale{{"north", 1}, {"north", 2}, {"north", 5}, {"north", 8}} {
		all = byShop.Add(all, s)
		if i%2 == 0 {
			a = byShop.Add(a, s)
		} else {
			b = byShop.Add(b, s)
		}
	}
	require.Equal(t, byShop.Result(all), byShop.Result(byShop.Merge(a, b)))
	require.Equal(t, byShop.Result(all), byShop.Result(byShop.Merge(b, a)))
}

// TestWithKeyBadInput: an incomplete aggregate or a nil key function is
// refused with ErrInvalidParameter naming it.
func TestWithKeyBadInput(t *testing.T) {
	_, err := WithKey(Count[sale](), (func(sale) string)(nil))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "WithKey key")
	_, err = WithKey(Aggregate[sale, int, int]{}, func(s sale) string { return s.shop })
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "Aggregate.Create")
}
