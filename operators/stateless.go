package operators

// Event is a value with its event time in nanoseconds (or its ingest time
// under processing-time semantics). Streams carry events; operators keep the
// time beside the value so that user functions never see it.
type Event[T any] struct {
	Time  int64
	Value T
}

// The stateless operators work on batches: each appends its outputs for src
// to dst and returns the extended slice, so a caller that reuses dst
// allocates nothing in steady state. Outputs keep their input's time. A
// panic in a user function propagates to the caller.

// Map applies f to every input.
func Map[In, Out any](dst []Event[Out], src []Event[In], f func(In) Out) []Event[Out] {
	for _, e := range src {
		dst = append(dst, Event[Out]{Time: e.Time, Value: f(e.Value)})
	}
	return dst
}

// Filter keeps the inputs for which keep returns true.
func Filter[T any](dst []Event[T], src []Event[T], keep func(T) bool) []Event[T] {
	for _, e := range src {
		if keep(e.Value) {
			dst = append(dst, e)
		}
	}
	return dst
}

// FlatMapper holds the emit closure of FlatMap so that one allocation serves
// every batch.
type FlatMapper[In, Out any] struct {
	f    func(in In, emit func(Out))
	emit func(Out)
	dst  []Event[Out]
	t    int64
}

// NewFlatMapper returns a FlatMap operator calling f for every input with an
// emit function; every emitted value carries the input's time.
func NewFlatMapper[In, Out any](f func(in In, emit func(Out))) (*FlatMapper[In, Out], error) {
	if f == nil {
		return nil, invalidParam("f", "nil", "a function")
	}
	m := &FlatMapper[In, Out]{f: f}
	m.emit = func(o Out) { m.dst = append(m.dst, Event[Out]{Time: m.t, Value: o}) }
	return m, nil
}

// Apply appends the outputs for src to dst.
func (m *FlatMapper[In, Out]) Apply(dst []Event[Out], src []Event[In]) []Event[Out] {
	m.dst = dst
	for _, e := range src {
		m.t = e.Time
		m.f(e.Value, m.emit)
	}
	dst = m.dst
	m.dst = nil
	return dst
}
