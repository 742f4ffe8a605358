package sketch

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Merge folds other into s, so that s summarises the concatenation of both
// streams with the same guarantees as if it had seen it whole: every
// monitored key has Count−Err ≤ true ≤ Count, and every key with true count
// > N/Capacity() stays monitored. other is not changed; s.Merge(s) doubles s.
//
// The merge is that of Agarwal et al. ("Mergeable summaries", PODS 2012) in
// Space-Saving form. Let m₁, m₂ be the smallest counts of full summaries (0
// for one not yet full): the bound on every key it does not monitor. Each
// key monitored by either side gets count c₁+c₂ and error e₁+e₂, where a side
// that does not monitor the key contributes (mᵢ, mᵢ); then the Capacity()
// largest counts are kept. This is Misra–Gries's "add the counters and
// subtract the (k+1)-th largest" seen through the Space-Saving/Misra–Gries
// isomorphism: the kept counts sum to at most N, so the smallest kept count
// (the new bound for keys not monitored) is at most N/Capacity().
//
// Merge needs equal capacities (ErrIncompatible otherwise), a combined
// weight below 2^64 and no zero SpaceSaving on either side
// (ErrInvalidParameter otherwise); on error s is unchanged.
func (s *SpaceSaving[K]) Merge(other *SpaceSaving[K]) error {
	if other == nil {
		return invalidParam("other", "nil", "a *SpaceSaving")
	}
	if s.capacity == 0 {
		return errZero("receiver", "SpaceSaving", ssBuilders)
	}
	if other.capacity == 0 {
		return errZero("other", "SpaceSaving", ssBuilders)
	}
	if other.capacity != s.capacity {
		return fmt.Errorf("%w: SpaceSaving capacity %d and %d differ", ErrIncompatible, s.capacity, other.capacity)
	}
	if other.n > math.MaxUint64-s.n {
		return invalidParam("other", fmt.Sprintf("N = %d", other.n), fmt.Sprintf("a total weight that keeps N = %d below 2^64", s.n))
	}
	m1, m2 := s.floor(), other.floor()
	cands := make([]Counter[K], 0, len(s.ctr)+len(other.ctr))
	// Visit both summaries in their list order so the result, ties included,
	// depends only on the summaries and never on map iteration.
	s.each(func(key K, count, err uint64) {
		if j, ok := other.index.get(key); ok {
			oc := &other.ctr[j]
			count, err = count+other.bkt[oc.bucket].count, err+oc.err
		} else {
			count, err = count+m2, err+m2
		}
		cands = append(cands, Counter[K]{Key: key, Count: count, Err: err})
	})
	other.each(func(key K, count, err uint64) {
		if _, ok := s.index.get(key); !ok {
			cands = append(cands, Counter[K]{Key: key, Count: count + m1, Err: err + m1})
		}
	})
	if len(cands) > s.capacity {
		slices.SortStableFunc(cands, func(a, b Counter[K]) int { return cmp.Compare(b.Count, a.Count) })
		clear(cands[s.capacity:])
		cands = cands[:s.capacity]
	}
	slices.SortStableFunc(cands, func(a, b Counter[K]) int { return cmp.Compare(a.Count, b.Count) })
	s.rebuild(cands, s.n+other.n)
	return nil
}

// each calls f for every monitored key in canonical order: buckets by
// increasing count, each bucket's counters in list order.
func (s *SpaceSaving[K]) each(f func(key K, count, err uint64)) {
	for b := s.min; b != ssNil; b = s.bkt[b].next {
		for i := s.bkt[b].head; i != ssNil; i = s.ctr[i].next {
			f(s.ctr[i].key, s.bkt[b].count, s.ctr[i].err)
		}
	}
}

// rebuild replaces the contents of s with cs (distinct keys, Count
// non-decreasing, at most Capacity() of them) and total weight n. Counters
// with equal counts keep the order of cs in their bucket, so rebuilding from
// each's order reproduces the summary exactly.
func (s *SpaceSaving[K]) rebuild(cs []Counter[K], n uint64) {
	s.Reset()
	s.n = n
	for lo := 0; lo < len(cs); {
		hi := lo + 1
		for hi < len(cs) && cs[hi].Count == cs[lo].Count {
			hi++
		}
		b := s.newBucket(cs[lo].Count)
		s.linkAfter(b, s.max)
		for _, c := range cs[lo:hi] {
			i := int32(len(s.ctr))
			s.index.put(c.Key, i)
			s.ctr = append(s.ctr, ssCounter[K]{key: c.Key, err: c.Err})
			s.attach(i, b)
		}
		lo = hi
	}
}
