package sketch

import (
	"fmt"
	"math"
)

// Merge folds other into l, so that l summarises the concatenation of both
// streams, in either order, with the guarantees of one summary of total
// weight N = N₁+N₂ (w = ⌈1/ε⌉):
//
//   - every key with an entry has count−err ≤ true ≤ count (Estimate,
//     Frequent), with err ≤ ⌊N₁/w⌋+⌊N₂/w⌋ ≤ ⌊N/w⌋ ≤ εN;
//   - a key without an entry has true count ≤ ⌊N/w⌋ ≤ εN;
//   - Frequent(s) reports every key with true count ≥ sN, and only keys
//     with true count ≥ (s−ε)N.
//
// Proof. Each side i keeps, for a key with an entry, f ≤ cᵢ ≤ f+Δ with
// Δ ≤ bᵢ = ⌊Nᵢ/w⌋, and cᵢ ≤ bᵢ for a key without one. A key with entries on
// both sides gets f₁+f₂ and Δ₁+Δ₂; a key with an entry on one side gets
// that side's f and Δ plus the other side's bᵢ, the most it can have had
// there. So c₁+c₂ ∈ [f, f+Δ] and Δ ≤ b₁+b₂ ≤ ⌊N/w⌋; a key on neither side
// has c₁+c₂ ≤ b₁+b₂ ≤ ⌊N/w⌋. Merge then drops the entries with
// f+Δ ≤ ⌊N/w⌋, as a bucket boundary does. These are the invariants the
// single-stream guarantees rest on, and Add keeps them (a new entry gets
// Δ = ⌊N/w⌋, the bound it had while absent), so the guarantees hold after
// any sequence of Add and Merge: a key with c ≥ sN > εN has an entry with
// f+Δ ≥ c, and a reported key has c ≥ f ≥ sN − Δ ≥ (s−ε)N.
//
// The merged summary holds at most Len()+other.Len() entries; the
// single-stream space bound is not claimed for it. Merge costs
// O(Len()+other.Len()) index look-ups and allocates only to grow l.
//
// Both summaries need the same epsilon (ErrIncompatible otherwise), a
// combined weight below 2^64 and no zero LossyCounting on either side
// (ErrInvalidParameter otherwise); on error l is unchanged. other is not
// changed; l.Merge(l) doubles l.
func (l *LossyCounting[K]) Merge(other *LossyCounting[K]) error {
	switch {
	case other == nil:
		return invalidParam("other", "nil", "a *LossyCounting")
	case l.width == 0:
		return errZero("receiver", "LossyCounting", lossyBuilders)
	case other.width == 0:
		return errZero("other", "LossyCounting", lossyBuilders)
	case other.epsilon != l.epsilon:
		return fmt.Errorf("%w: LossyCounting epsilon %g and %g differ", ErrIncompatible, l.epsilon, other.epsilon)
	case other.n > math.MaxUint64-l.n:
		return invalidParam("other", fmt.Sprintf("N = %d", other.n), fmt.Sprintf("a total weight that keeps N = %d below 2^64", l.n))
	}
	n := l.n + other.n
	if other == l {
		for i := range l.ent {
			l.ent[i].f *= 2
			l.ent[i].delta *= 2
		}
	} else {
		b1, b2 := l.bucket, other.bucket
		for i := range l.ent {
			e := &l.ent[i]
			if j, ok := other.index.get(e.key); ok {
				e.f += other.ent[j].f
				e.delta += other.ent[j].delta
			} else {
				e.delta += b2
			}
		}
		for j := range other.ent {
			e := &other.ent[j]
			if _, ok := l.index.get(e.key); !ok {
				l.index.put(e.key, int32(len(l.ent)))
				l.ent = append(l.ent, lcEntry[K]{key: e.key, f: e.f, delta: e.delta + b1})
			}
		}
	}
	l.n = n
	l.prune()
	return nil
}
