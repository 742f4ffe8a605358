package operators

import "time"

// KeyedState is what KeyedWindows and KeyedSessions have in common: the
// per-worker state of a keyed window aggregation, whatever its windows.
type KeyedState[In, Acc, Out any] interface {
	Add(key uint64, t int64, in In) bool
	AddBatch(keys []uint64, ev []Event[In], late []int32) []int32
	AddPartial(p Partial[Acc]) bool
	Advance(wm int64, result func(Result[Out]), partial func(Partial[Acc]))
	FlushPartials(partial func(Partial[Acc]))
	Watermark() int64
	Stats() WindowStats
	Pending() int
	// AppendState and RestoreState encode and restore the whole state
	// for checkpoints (the Aggregate's Codec encodes accumulators).
	AppendState(dst []byte) ([]byte, error)
	RestoreState(b []byte) error
	// RestoreMerged restores the union of several states' keys for which
	// keep is true: a worker of a rescaled stage (see
	// KeyedWindows.RestoreMerged).
	RestoreMerged(states [][]byte, keep func(key uint64) bool) error
}

// NewKeyedState returns a KeyedSessions for session windows and a
// KeyedWindows for the others.
func NewKeyedState[In, Acc, Out any](agg Aggregate[In, Acc, Out], win Windows, allowedLateness time.Duration, phase Phase) (KeyedState[In, Acc, Out], error) {
	if win.IsSession() {
		ks, err := NewKeyedSessions(agg, win, allowedLateness, phase)
		if err != nil {
			return nil, err // not a nil *KeyedSessions in a non-nil interface
		}
		return ks, nil
	}
	kw, err := NewKeyedWindows(agg, win, allowedLateness, phase)
	if err != nil {
		return nil, err
	}
	return kw, nil
}
