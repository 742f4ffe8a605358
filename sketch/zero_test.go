package sketch

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zeroWant is what a method does on a zero value.
type zeroWant int

const (
	zeroPanics  zeroWant = iota // panics with "sketch: T used without <constructor>"
	zeroErrors                  // returns an ErrInvalidParameter naming the zero T
	zeroReports                 // an accessor: returns the zero value, checked by the call
	zeroDecodes                 // UnmarshalBinary: builds a usable sketch
)

// zeroCase calls one method on a fresh zero value (or with a zero argument)
// and returns the method's error, if it has one.
type zeroCase struct {
	want zeroWant
	call func(t *testing.T) error
}

// zeroType is one exported sketch type: its name as the messages give it,
// a usable instance for the calls that take another sketch, and a case per
// exported method.
type zeroType struct {
	name    string
	typ     reflect.Type
	ctor    string
	methods map[string]zeroCase
}

func zeroTypes(t *testing.T) []zeroType {
	cm, err := NewCountMinSize(64, 3)
	require.NoError(t, err)
	cmEnc, err := cm.MarshalBinary()
	require.NoError(t, err)
	hll, err := NewHyperLogLog(10)
	require.NoError(t, err)
	hllEnc, err := hll.MarshalBinary()
	require.NoError(t, err)
	ss, err := NewSpaceSaving[uint64](8)
	require.NoError(t, err)
	ssEnc, err := ss.MarshalBinary()
	require.NoError(t, err)
	lc, err := NewLossyCounting[uint64](0.01)
	require.NoError(t, err)
	lcEnc, err := lc.MarshalBinary()
	require.NoError(t, err)
	res, err := NewReservoir[int](4, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	wres, err := NewWeightedReservoir[int](4, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	ell, err := NewExaLogLog(2, 20, 4)
	require.NoError(t, err)
	noErr := func(f func()) func(*testing.T) error { return func(*testing.T) error { f(); return nil } }
	encode := func(m interface {
		AppendBinary([]byte) ([]byte, error)
	}) func(*testing.T) error {
		return func(t *testing.T) error {
			dst := []byte("keep")
			got, err := m.AppendBinary(dst)
			require.Equal(t, "keep", string(got), "AppendBinary must leave dst as it was")
			return err
		}
	}
	marshal := func(m interface{ MarshalBinary() ([]byte, error) }) func(*testing.T) error {
		return func(t *testing.T) error {
			b, err := m.MarshalBinary()
			require.Nil(t, b)
			return err
		}
	}
	reports := func(got func() any) zeroCase {
		return zeroCase{zeroReports, func(t *testing.T) error {
			v := got()
			require.True(t, reflect.ValueOf(v).IsZero(), "got %v", v)
			return nil
		}}
	}
	return []zeroType{
		{"CountMin", reflect.TypeFor[*CountMin](), "NewCountMin", map[string]zeroCase{
			"Add":            {zeroPanics, noErr(func() { new(CountMin).Add([]byte("k"), 1) })},
			"AddHash":        {zeroPanics, noErr(func() { new(CountMin).AddHash(1, 1) })},
			"AddHashes":      {zeroPanics, noErr(func() { new(CountMin).AddHashes([]uint64{1, 2}, 1) })},
			"AddString":      {zeroPanics, noErr(func() { new(CountMin).AddString("k", 1) })},
			"AppendBinary":   {zeroErrors, encode(new(CountMin))},
			"Conservative":   reports(func() any { return new(CountMin).Conservative() }),
			"Depth":          reports(func() any { return new(CountMin).Depth() }),
			"Estimate":       {zeroPanics, noErr(func() { new(CountMin).Estimate([]byte("k")) })},
			"EstimateHash":   {zeroPanics, noErr(func() { new(CountMin).EstimateHash(1) })},
			"EstimateString": {zeroPanics, noErr(func() { new(CountMin).EstimateString("k") })},
			"MarshalBinary":  {zeroErrors, marshal(new(CountMin))},
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, cm.Merge(new(CountMin)), "other = a zero CountMin")
				return new(CountMin).Merge(cm)
			}},
			"Reset": {zeroPanics, noErr(func() { new(CountMin).Reset() })},
			"Total": reports(func() any { return new(CountMin).Total() }),
			"UnmarshalBinary": {zeroDecodes, func(t *testing.T) error {
				var c CountMin
				require.NoError(t, c.UnmarshalBinary(cmEnc))
				c.AddString("k", 3)
				require.Equal(t, uint64(3), c.EstimateString("k"))
				return nil
			}},
			"Width": reports(func() any { return new(CountMin).Width() }),
		}},
		{"HyperLogLog", reflect.TypeFor[*HyperLogLog](), "NewHyperLogLog", map[string]zeroCase{
			"Add":                {zeroPanics, noErr(func() { new(HyperLogLog).Add([]byte("k")) })},
			"AddHash":            {zeroPanics, noErr(func() { new(HyperLogLog).AddHash(1) })},
			"AddHashes":          {zeroPanics, noErr(func() { new(HyperLogLog).AddHashes([]uint64{1, 2}) })},
			"AddString":          {zeroPanics, noErr(func() { new(HyperLogLog).AddString("k") })},
			"AppendBinary":       {zeroErrors, encode(new(HyperLogLog))},
			"Clone":              {zeroPanics, noErr(func() { new(HyperLogLog).Clone() })},
			"Estimate":           {zeroPanics, noErr(func() { new(HyperLogLog).Estimate() })},
			"EstimateMartingale": {zeroPanics, noErr(func() { new(HyperLogLog).EstimateMartingale() })},
			"MartingaleValid":    {zeroPanics, noErr(func() { new(HyperLogLog).MartingaleValid() })},
			"MarshalBinary":      {zeroErrors, marshal(new(HyperLogLog))},
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, hll.Merge(new(HyperLogLog)), "other = a zero HyperLogLog")
				return new(HyperLogLog).Merge(hll)
			}},
			"MergeReduce": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, hll.MergeReduce(new(HyperLogLog)), "other = a zero HyperLogLog")
				return new(HyperLogLog).MergeReduce(hll)
			}},
			"Precision": reports(func() any { return new(HyperLogLog).Precision() }),
			"Reset":     {zeroPanics, noErr(func() { new(HyperLogLog).Reset() })},
			"Sparse":    {zeroPanics, noErr(func() { new(HyperLogLog).Sparse() })},
			"UnmarshalBinary": {zeroDecodes, func(t *testing.T) error {
				var s HyperLogLog
				require.NoError(t, s.UnmarshalBinary(hllEnc))
				s.AddString("k")
				require.Equal(t, uint64(1), s.Estimate())
				return nil
			}},
		}},
		{"ExaLogLog", reflect.TypeFor[*ExaLogLog](), "NewExaLogLog", map[string]zeroCase{
			"Add":                {zeroPanics, noErr(func() { new(ExaLogLog).Add([]byte("k")) })},
			"AddHash":            {zeroPanics, noErr(func() { new(ExaLogLog).AddHash(1) })},
			"AddString":          {zeroPanics, noErr(func() { new(ExaLogLog).AddString("k") })},
			"Clone":              {zeroPanics, noErr(func() { new(ExaLogLog).Clone() })},
			"Downsize":           {zeroPanics, noErr(func() { _, _ = new(ExaLogLog).Downsize(20, 2) })},
			"Estimate":           {zeroPanics, noErr(func() { new(ExaLogLog).Estimate() })},
			"EstimateMartingale": {zeroPanics, noErr(func() { new(ExaLogLog).EstimateMartingale() })},
			"MartingaleValid":    {zeroPanics, noErr(func() { new(ExaLogLog).MartingaleValid() })},
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, ell.Merge(new(ExaLogLog)), "other = a zero ExaLogLog")
				return new(ExaLogLog).Merge(ell)
			}},
			"Params": reports(func() any { t, d, p := new(ExaLogLog).Params(); return [3]uint8{t, d, p} }),
			"Reset":  {zeroPanics, noErr(func() { new(ExaLogLog).Reset() })},
			"State":  {zeroPanics, noErr(func() { new(ExaLogLog).State() })},
		}},
		{"AtomicExaLogLog", reflect.TypeFor[*AtomicExaLogLog](), "NewAtomicExaLogLog", map[string]zeroCase{
			"AddHash":   {zeroPanics, noErr(func() { new(AtomicExaLogLog).AddHash(1) })},
			"AddString": {zeroPanics, noErr(func() { new(AtomicExaLogLog).AddString("k") })},
			"Estimate":  {zeroPanics, noErr(func() { new(AtomicExaLogLog).Estimate() })},
			"Params":    reports(func() any { t, d, p := new(AtomicExaLogLog).Params(); return [3]uint8{t, d, p} }),
			"Snapshot":  {zeroPanics, noErr(func() { new(AtomicExaLogLog).Snapshot() })},
		}},
		{"SpaceSaving", reflect.TypeFor[*SpaceSaving[uint64]](), "NewSpaceSaving", map[string]zeroCase{
			"Add":           {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).Add(1) })},
			"AddCount":      {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).AddCount(1) })},
			"AddN":          {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).AddN(1, 2) })},
			"AppendBinary":  {zeroErrors, encode(new(SpaceSaving[uint64]))},
			"AppendTop":     {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).AppendTop(nil, 3) })},
			"Capacity":      reports(func() any { return new(SpaceSaving[uint64]).Capacity() }),
			"Estimate":      {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).Estimate(1) })},
			"Len":           reports(func() any { return new(SpaceSaving[uint64]).Len() }),
			"MarshalBinary": {zeroErrors, marshal(new(SpaceSaving[uint64]))},
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, ss.Merge(new(SpaceSaving[uint64])), "other = a zero SpaceSaving")
				return new(SpaceSaving[uint64]).Merge(ss)
			}},
			"N":     reports(func() any { return new(SpaceSaving[uint64]).N() }),
			"Reset": {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).Reset() })},
			"Top":   {zeroPanics, noErr(func() { new(SpaceSaving[uint64]).Top(3) })},
			"UnmarshalBinary": {zeroDecodes, func(t *testing.T) error {
				var s SpaceSaving[uint64]
				require.NoError(t, s.UnmarshalBinary(ssEnc))
				s.Add(7)
				c, e := s.Estimate(7)
				require.Equal(t, [2]uint64{1, 0}, [2]uint64{c, e})
				return nil
			}},
		}},
		{"MisraGries", reflect.TypeFor[*MisraGries](), "NewMisraGries", map[string]zeroCase{
			"Add":           {zeroPanics, noErr(func() { new(MisraGries).Add(1) })},
			"AddN":          {zeroPanics, noErr(func() { new(MisraGries).AddN(1, 2) })},
			"AppendHeavy":   {zeroPanics, noErr(func() { new(MisraGries).AppendHeavy(nil, 1) })},
			"AppendBinary":  {zeroErrors, encode(new(MisraGries))},
			"MarshalBinary": {zeroErrors, marshal(new(MisraGries))},
			"UnmarshalBinary": {zeroDecodes, func(t *testing.T) error {
				g, err := NewMisraGries(4)
				require.NoError(t, err)
				g.AddN(7, 3)
				var z MisraGries
				require.NoError(t, z.UnmarshalBinary(freqMust(g.MarshalBinary())))
				z.Add(7)
				require.Equal(t, uint64(4), z.Count(7))
				return nil
			}},
			"Capacity": reports(func() any { return new(MisraGries).Capacity() }),
			"Count":    {zeroPanics, noErr(func() { new(MisraGries).Count(1) })},
			"Len":      reports(func() any { return new(MisraGries).Len() }),
			"N":        reports(func() any { return new(MisraGries).N() }),
			"Offset":   reports(func() any { return new(MisraGries).Offset() }),
			"Merge": {zeroErrors, func(t *testing.T) error {
				g, err := NewMisraGries(4)
				require.NoError(t, err)
				require.ErrorContains(t, g.Merge(new(MisraGries)), "other = a zero MisraGries")
				return new(MisraGries).Merge(g)
			}},
		}},
		{"LossyCounting", reflect.TypeFor[*LossyCounting[uint64]](), "NewLossyCounting", map[string]zeroCase{
			"Add":           {zeroPanics, noErr(func() { new(LossyCounting[uint64]).Add(1) })},
			"AddN":          {zeroPanics, noErr(func() { new(LossyCounting[uint64]).AddN(1, 2) })},
			"AppendBinary":  {zeroErrors, encode(new(LossyCounting[uint64]))},
			"Epsilon":       reports(func() any { return new(LossyCounting[uint64]).Epsilon() }),
			"Estimate":      {zeroPanics, noErr(func() { new(LossyCounting[uint64]).Estimate(1) })},
			"Frequent":      {zeroErrors, func(*testing.T) error { _, err := new(LossyCounting[uint64]).Frequent(0.5); return err }},
			"Len":           reports(func() any { return new(LossyCounting[uint64]).Len() }),
			"MarshalBinary": {zeroErrors, marshal(new(LossyCounting[uint64]))},
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, lc.Merge(new(LossyCounting[uint64])), "other = a zero LossyCounting")
				return new(LossyCounting[uint64]).Merge(lc)
			}},
			"N":     reports(func() any { return new(LossyCounting[uint64]).N() }),
			"Reset": {zeroPanics, noErr(func() { new(LossyCounting[uint64]).Reset() })},
			"UnmarshalBinary": {zeroDecodes, func(t *testing.T) error {
				var l LossyCounting[uint64]
				require.NoError(t, l.UnmarshalBinary(lcEnc))
				l.Add(7)
				require.Equal(t, uint64(1), l.N())
				return nil
			}},
		}},
		{"Reservoir", reflect.TypeFor[*Reservoir[int]](), "NewReservoir", map[string]zeroCase{
			"Add":    {zeroPanics, noErr(func() { new(Reservoir[int]).Add(1) })},
			"AddAll": {zeroPanics, noErr(func() { new(Reservoir[int]).AddAll([]int{1, 2}) })},
			"K":      reports(func() any { return new(Reservoir[int]).K() }),
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, res.Merge(new(Reservoir[int])), "other = a zero Reservoir")
				return new(Reservoir[int]).Merge(res)
			}},
			"N":      reports(func() any { return new(Reservoir[int]).N() }),
			"Sample": {zeroPanics, noErr(func() { new(Reservoir[int]).Sample() })},
		}},
		{"ConcurrentHyperLogLog", reflect.TypeFor[*ConcurrentHyperLogLog](), "NewConcurrentHyperLogLog", map[string]zeroCase{
			"AddHash":   {zeroPanics, noErr(func() { new(ConcurrentHyperLogLog).AddHash(1) })},
			"AddHashes": {zeroPanics, noErr(func() { new(ConcurrentHyperLogLog).AddHashes([]uint64{1, 2}) })},
			"AddString": {zeroPanics, noErr(func() { new(ConcurrentHyperLogLog).AddString("k") })},
			"Estimate":  {zeroPanics, noErr(func() { new(ConcurrentHyperLogLog).Estimate() })},
			"Shards":    reports(func() any { return new(ConcurrentHyperLogLog).Shards() }),
			"Snapshot":  {zeroPanics, noErr(func() { new(ConcurrentHyperLogLog).Snapshot() })},
		}},
		{"ConcurrentCountMin", reflect.TypeFor[*ConcurrentCountMin](), "NewConcurrentCountMin", map[string]zeroCase{
			"AddHash":        {zeroPanics, noErr(func() { new(ConcurrentCountMin).AddHash(1, 1) })},
			"AddHashes":      {zeroPanics, noErr(func() { new(ConcurrentCountMin).AddHashes([]uint64{1, 2}, 1) })},
			"AddString":      {zeroPanics, noErr(func() { new(ConcurrentCountMin).AddString("k", 1) })},
			"EstimateHash":   {zeroPanics, noErr(func() { new(ConcurrentCountMin).EstimateHash(1) })},
			"EstimateString": {zeroPanics, noErr(func() { new(ConcurrentCountMin).EstimateString("k") })},
			"Shards":         reports(func() any { return new(ConcurrentCountMin).Shards() }),
			"Snapshot":       {zeroPanics, noErr(func() { new(ConcurrentCountMin).Snapshot() })},
			"Total":          reports(func() any { return new(ConcurrentCountMin).Total() }),
		}},
		{"ConcurrentDDSketch", reflect.TypeFor[*ConcurrentDDSketch](), "NewConcurrentDDSketch", map[string]zeroCase{
			"Add":      {zeroErrors, func(*testing.T) error { return new(ConcurrentDDSketch).Add(1) }},
			"N":        reports(func() any { return new(ConcurrentDDSketch).N() }),
			"Quantile": {zeroErrors, func(*testing.T) error { _, err := new(ConcurrentDDSketch).Quantile(0.5); return err }},
			"Quantiles": {zeroErrors, func(t *testing.T) error {
				qs, err := new(ConcurrentDDSketch).Quantiles(0.5)
				require.Nil(t, qs)
				return err
			}},
			"Shards":   reports(func() any { return new(ConcurrentDDSketch).Shards() }),
			"Snapshot": {zeroPanics, noErr(func() { new(ConcurrentDDSketch).Snapshot() })},
		}},
		{"WeightedReservoir", reflect.TypeFor[*WeightedReservoir[int]](), "NewWeightedReservoir", map[string]zeroCase{
			"AddWeighted": {zeroErrors, func(*testing.T) error { return new(WeightedReservoir[int]).AddWeighted(1, 1) }},
			"K":           reports(func() any { return new(WeightedReservoir[int]).K() }),
			"Merge": {zeroErrors, func(t *testing.T) error {
				require.ErrorContains(t, wres.Merge(new(WeightedReservoir[int])), "other = a zero WeightedReservoir")
				return new(WeightedReservoir[int]).Merge(wres)
			}},
			"N":           reports(func() any { return new(WeightedReservoir[int]).N() }),
			"Sample":      {zeroPanics, noErr(func() { new(WeightedReservoir[int]).Sample() })},
			"TotalWeight": reports(func() any { return new(WeightedReservoir[int]).TotalWeight() }),
		}},
	}
}

// callZero runs c and returns what it panicked with (nil if it returned) and
// its error.
func callZero(t *testing.T, c zeroCase) (p any, err error) {
	defer func() { p = recover() }()
	return nil, c.call(t)
}

// TestZeroValues pins what every exported method of every sketch type does
// on the zero value: a panic whose message names the type and its
// constructor, an ErrInvalidParameter naming it, or (for accessors) a zero
// result; never a runtime error such as an index out of range or a
// negative shift, and never a silent answer. Decoding into a zero value
// builds a usable sketch.
func TestZeroValues(t *testing.T) {
	for _, zt := range zeroTypes(t) {
		t.Run(zt.name, func(t *testing.T) {
			var exported []string
			for i := range zt.typ.NumMethod() {
				exported = append(exported, zt.typ.Method(i).Name)
			}
			var cased []string
			for m := range zt.methods {
				cased = append(cased, m)
			}
			slices.Sort(cased)
			require.Equal(t, exported, cased, "every exported method needs a zero-value case")
			for name, c := range zt.methods {
				t.Run(name, func(t *testing.T) {
					p, err := callZero(t, c)
					switch c.want {
					case zeroPanics:
						require.NotNil(t, p, "want a panic")
						msg := fmt.Sprint(p)
						require.True(t, strings.HasPrefix(msg, "sketch: "+zt.name+" used without "+zt.ctor), "panic %q", msg)
					case zeroErrors:
						require.Nil(t, p, "want an error, not a panic")
						require.ErrorIs(t, err, ErrInvalidParameter)
						require.ErrorContains(t, err, "a zero "+zt.name)
					case zeroReports, zeroDecodes:
						require.Nil(t, p, "want no panic")
						require.NoError(t, err)
					}
				})
			}
		})
	}
}
