package bench

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/partitionlab"
	"github.com/skewerhq/skewer/runtime"
)

// PartitionerKinds lists the partitioners a run or sweep may name, sorted:
// every kind of partition.New and the research kinds of partitionlab
// (dchoices-paper, rr-head) that the results compare them with, for the
// command line's -partitioner (which does not import partition).
func PartitionerKinds() []string {
	return slices.Sorted(slices.Values(append(partition.Kinds(), partitionlab.Kinds()...)))
}

// newFactory is the one construction path of a -partitioner choice: the
// validation of a run or a sweep builds a factory of each named kind to
// check it, and every configuration builds its own with its options (a
// Factory numbers the partitioners it builds to break ties, so a
// configuration never reuses another's). A research kind is
// partitionlab's, the others partition's. An unknown kind is refused
// naming -partitioner; an option the kind refuses, naming the kind.
func newFactory(kind string, opts ...partition.Option) (partition.Factory, error) {
	build := partition.NewFactory
	switch {
	case slices.Contains(partitionlab.Kinds(), kind):
		build = partitionlab.NewFactory
	case !slices.Contains(partition.Kinds(), kind):
		return nil, invalidChoice("-partitioner", kind, PartitionerKinds())
	}
	f, err := build(kind, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: -partitioner %s: %v", ErrInvalidParameter, kind, err)
	}
	return f, nil
}

// newEdge is the runtime edge of a -partitioner choice with opts, from a
// stage of senders workers: for partition's kinds a runtime.Kind edge (the
// runtime adds WithSources(senders), gives sending worker i instance i,
// and knows from the kind whether the edge splits keys); for the research
// kinds a runtime.Partitioned edge over partitionlab's factory, with
// WithSources(senders) added here (the runtime then asks one of its
// partitioners whether it splits keys). Errors as newFactory's.
func newEdge(kind string, senders int, opts ...partition.Option) (runtime.Edge, error) {
	if slices.Contains(partitionlab.Kinds(), kind) {
		f, err := newFactory(kind, append([]partition.Option{partition.WithSources(senders)}, opts...)...)
		if err != nil {
			return runtime.Edge{}, err
		}
		return runtime.Partitioned(kind, f), nil
	}
	if _, err := newFactory(kind, opts...); err != nil {
		return runtime.Edge{}, err
	}
	return runtime.Kind(kind, opts...)
}
