package partitionlab

import (
	"slices"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/internal/labkinds"
)

// Kinds lists the research partitioner kinds NewFactory builds, sorted:
// dchoices-paper (the paper's D-Choices: head keys to the least loaded of d
// candidates drawn from d independent hashes, which collide, so that they
// cover 1 - ((n-1)/n)^d of the workers where partition's dchoices covers
// d/n) and rr-head (head keys round-robin over all n workers, tail keys as
// PKG: the head balanced blindly). docs/results/partitioning.md compares
// them with partition's kinds; neither is one of partition.Kinds, which
// New and NewFactory of package partition build.
func Kinds() []string { return slices.Clone(labkinds.Kinds) }

// NewFactory is partition.NewFactory for the research kinds (Kinds): it
// validates kind and the options (partition's, with the same meaning)
// once and returns a Factory whose instances break ties differently. An
// unknown kind, one of partition's included, is refused with an error
// wrapping partition.ErrInvalidParameter.
func NewFactory(kind string, opts ...partition.Option) (partition.Factory, error) {
	return labkinds.NewFactory.(func(string, ...partition.Option) (partition.Factory, error))(kind, opts...)
}

// New builds a partitioner of a research kind (Kinds) for n workers.
func New(kind string, workers int, opts ...partition.Option) (partition.Partitioner, error) {
	f, err := NewFactory(kind, opts...)
	if err != nil {
		return nil, err
	}
	return f(workers)
}
