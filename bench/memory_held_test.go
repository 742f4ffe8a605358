package bench

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

func TestHeldBytes(t *testing.T) {
	type inner struct{ v []uint32 }
	type outer struct {
		a    []uint64
		b    *inner
		c    *inner // the same inner: counted once
		i    any
		name string
	}
	in := &inner{v: make([]uint32, 3, 10)}
	v := &outer{a: make([]uint64, 5), b: in, c: in, i: in, name: "abc"}
	want := reflect.TypeFor[outer]().Size() + 5*8 + reflect.TypeFor[inner]().Size() + 10*4 + 3
	require.EqualValues(t, want, heldBytes(v))
	require.EqualValues(t, want, heldBytes(*v), "a value holds what its pointer reaches")
	require.Zero(t, heldBytes(nil))
}

func TestHeldBytesHyperLogLog(t *testing.T) {
	// A dense HyperLogLog at p = 14 holds its struct and 2^14 one-byte
	// registers, whatever scratch it borrowed on the way.
	h, err := sketch.NewHyperLogLog(14)
	require.NoError(t, err)
	for i := range uint64(200_000) {
		h.AddHash(i * 0x9e3779b97f4a7c15)
	}
	require.False(t, h.Sparse())
	require.EqualValues(t, reflect.TypeFor[sketch.HyperLogLog]().Size()+1<<14, heldBytes(h))
}
