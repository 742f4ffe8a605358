package partition

import "github.com/skewerhq/skewer/partition/internal/labkinds"

// labKinds are the research kinds that docs/results/partitioning.md
// compares the others with: "dchoices-paper" (the paper's D-Choices: d
// candidates from d independent hashes, which collide) and "rr-head"
// (head keys round-robin over all workers, tail keys as PKG). They are not
// Kinds: New and NewFactory refuse them, and package partitionlab builds
// them (partitionlab.NewFactory), with the same Options, through
// partition/internal/labkinds.
var labKinds = map[string]kindSpec{
	"dchoices-paper": {func(n int, c *config) (Partitioner, error) { return newDChoices(n, c, true) }, true},
	"rr-head":        {func(n int, c *config) (Partitioner, error) { return newHeadAll(n, c, true) }, true},
}

func init() {
	labkinds.Kinds = kindNames(labKinds)
	labkinds.NewFactory = func(kind string, opts ...Option) (Factory, error) {
		return newFactory(labKinds, kind, opts)
	}
}
