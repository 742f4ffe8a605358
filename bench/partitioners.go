package bench

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/partition"
)

// PartitionerKinds lists the partitioners a run or sweep may name: every
// kind of partition.New, for the command line's -partitioner (which does
// not import partition).
func PartitionerKinds() []string { return partition.Kinds() }

// newFactory is the one construction path of a -partitioner choice: the
// validation of a run or a sweep builds a factory of each named kind to
// check it, and every configuration builds its own with its options (a
// Factory numbers the partitioners it builds to break ties, so a
// configuration never reuses another's). An unknown kind is refused
// naming -partitioner; an option the kind refuses, naming the kind.
func newFactory(kind string, opts ...partition.Option) (partition.Factory, error) {
	if !slices.Contains(partition.Kinds(), kind) {
		return nil, invalidChoice("-partitioner", kind, partition.Kinds())
	}
	f, err := partition.NewFactory(kind, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: -partitioner %s: %v", ErrInvalidParameter, kind, err)
	}
	return f, nil
}
