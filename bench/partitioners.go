package bench

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/partitionlab"
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
