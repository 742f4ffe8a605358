package runtime

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition"
)

// DefaultMaxParallelism is the number of key groups of a job without
// MaxParallelism.
const DefaultMaxParallelism = 128

// maxMaxParallelism bounds MaxParallelism.
const maxMaxParallelism = 1 << 15

// MaxParallelism sets the number of key groups of the job's Hash edges
// (default DefaultMaxParallelism, at most 32768): a key's group is a range
// of its hash, key group g of m goes to worker g·n/m of the n receiving
// ones, so each worker owns a contiguous range of key groups, and a stage
// restored at another parallelism moves whole key groups: no key's state
// is split, and a worker reads only the snapshots of the workers whose
// key groups it takes over. A stage fed by a Hash edge has at most m
// workers. When n divides m the placement is partition.NewHash's; when it
// does not, workers own ⌊m/n⌋ or ⌈m/n⌉ key groups, an imbalance of up to
// n/m under uniform keys, which a larger m makes smaller.
func MaxParallelism(m int) JobOpt { return jobOpt(func(c *jobConfig) { c.maxPar = m }) }

// keyGroups routes a key to its key group and the key group to its
// worker (see MaxParallelism).
type keyGroups struct {
	m     int
	owner []int32 // key group -> worker
	n     int
}

// newKeyGroups returns the router of m key groups to n workers: a
// *partition.Hash when n divides m (the same placement, routed inline by
// the exchange's fast paths), else a table of the key groups' owners.
func newKeyGroups(m, n int) (partition.Partitioner, error) {
	if n > m {
		return nil, invalidParam("Parallelism", n, fmt.Sprintf("at most MaxParallelism = %d behind a Hash edge", m))
	}
	if m%n == 0 {
		return partition.NewHash(n)
	}
	k := &keyGroups{m: m, n: n, owner: make([]int32, m)}
	for g := range k.owner {
		k.owner[g] = int32(keyGroupOwner(g, m, n))
	}
	return k, nil
}

func (k *keyGroups) Route(key uint64) int { return int(k.owner[hashx.Reduce(key, k.m)]) }
func (k *keyGroups) Workers() int         { return k.n }

// keyGroupOwner is the worker of n that owns key group g of m.
func keyGroupOwner(g, m, n int) int { return g * n / m }

// keyGroupRange is the key groups [lo, hi) of m that worker w of n owns.
func keyGroupRange(m, n, w int) (lo, hi int) {
	// The smallest g with g·n/m >= w is ⌈w·m/n⌉.
	return (w*m + n - 1) / n, ((w+1)*m + n - 1) / n
}
