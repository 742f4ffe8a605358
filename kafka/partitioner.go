package kafka

import (
	"github.com/cespare/xxhash/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition"
)

// Partitioner is a kgo.Partitioner backed by one of skewer's partitioners
// (see partition.Kinds): "hash" is key grouping, and "pkg", "dchoices" and
// "wchoices" balance a skewed stream by sending one key to several
// partitions. Load is what this producer has routed, as partial key
// grouping prescribes: each producer balances its own stream, with no
// coordination. A key's records reach several partitions only under the
// splitting kinds (partition.SplitsKeys); downstream, a merge stage
// combines the partial aggregates (see Worker and Merge).
//
// Records without a key are placed on their Partition field, as
// kgo.ManualPartitioner does: that is how watermarks reach every
// partition.
type Partitioner struct {
	kind    string
	factory partition.Factory
	split   bool
	backup  bool
	hashAll bool
}

// PartitionerOpt configures NewPartitioner beyond the kind.
type PartitionerOpt struct {
	// Options are passed to partition.NewFactory.
	Options []partition.Option
	// Buffered makes partitioners that expose their candidates
	// (partition.Candidater: PKG) choose, among a key's candidates, the
	// partition with the fewest records buffered in this client
	// (kgo.TopicBackupPartitioner), ties broken by the records routed: a
	// partition whose broker is slow stops receiving the keys that can go
	// elsewhere. Other kinds route as without it.
	Buffered bool
	// HashKeys routes every record on the XXH64 of its key bytes, 8-byte
	// keys included. Without it an 8-byte key is taken as the key hash
	// (KeyHash), as this package's Producer writes it; set it when other
	// producers write the topic with raw 8-byte identifiers (big-endian
	// integers), whose top bits, which placement reads, are mostly zero:
	// sequential ids would all reach partition 0 under hash partitioning,
	// and partitions 0 and 1 under PKG. Every producer of a topic should
	// use the same setting, or a key routed both ways reaches partitions
	// that neither setting alone would give it. Workers key their state by
	// KeyHash either way; the partials and output topics are always routed
	// with HashKeys, so they spread whatever the input's keys are.
	HashKeys bool
}

// stagePartitioner routes the records workers write to the partials topic
// and the merge stage to the output topic: key grouping on the XXH64 of
// the 8-byte key (HashKeys), so that partials and results spread over
// their partitions whether the input's keys were hashes or raw ids.
func stagePartitioner() (*Partitioner, error) {
	return NewPartitioner("hash", PartitionerOpt{HashKeys: true})
}

// NewPartitioner returns a Partitioner of the given kind.
func NewPartitioner(kind string, o PartitionerOpt) (*Partitioner, error) {
	f, err := partition.NewFactory(kind, o.Options...)
	if err != nil {
		return nil, err
	}
	p, err := f(2)
	if err != nil {
		return nil, err
	}
	return &Partitioner{kind: kind, factory: f, split: partition.SplitsKeys(p), backup: o.Buffered, hashAll: o.HashKeys}, nil
}

// Kind is the partitioner's kind.
func (p *Partitioner) Kind() string { return p.kind }

// SplitsKeys reports whether one key's records may reach several partitions.
func (p *Partitioner) SplitsKeys() bool { return p.split }

// ForTopic implements kgo.Partitioner: each topic gets its own instance,
// with its own load.
func (p *Partitioner) ForTopic(string) kgo.TopicPartitioner {
	t := &topicPartitioner{factory: p.factory, hashAll: p.hashAll}
	if p.backup {
		return &backupPartitioner{topicPartitioner: t}
	}
	return t
}

type topicPartitioner struct {
	factory partition.Factory
	p       partition.Partitioner
	cand    partition.Candidater
	n       int
	sent    []uint64
	hashAll bool // PartitionerOpt.HashKeys
}

// keyHash is the hash a record is routed on (PartitionerOpt.HashKeys).
func (t *topicPartitioner) keyHash(key []byte) uint64 {
	if t.hashAll {
		return xxhash.Sum64(key)
	}
	return KeyHash(key)
}

// RequiresConsistency implements kgo.TopicPartitioner: n is always the
// topic's partition count, so a key's candidates do not move when a
// partition is briefly unwritable.
func (*topicPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

// ensure builds the partitioner for n partitions (again if n changed; the
// load then starts over).
func (t *topicPartitioner) ensure(n int) bool {
	if n == t.n && t.p != nil {
		return true
	}
	p, err := t.factory(n)
	if err != nil {
		return false
	}
	t.p, t.n, t.sent = p, n, make([]uint64, n)
	t.cand, _ = p.(partition.Candidater)
	return true
}

// Partition implements kgo.TopicPartitioner. It does not allocate after the
// first record of a partition count.
func (t *topicPartitioner) Partition(r *kgo.Record, n int) int {
	if len(r.Key) == 0 {
		return int(r.Partition)
	}
	key := t.keyHash(r.Key)
	if !t.ensure(n) {
		return hashx.Reduce(key, n) // n > partition.MaxWorkers partitions: key grouping
	}
	w := t.p.Route(key)
	t.sent[w]++
	return w
}

type backupPartitioner struct {
	*topicPartitioner
	buffered []int64
	scratch  []int
}

// PartitionByBackup implements kgo.TopicBackupPartitioner.
func (b *backupPartitioner) PartitionByBackup(r *kgo.Record, n int, it kgo.TopicBackupIter) int {
	if len(r.Key) == 0 || !b.ensure(n) || b.cand == nil {
		return b.Partition(r, n)
	}
	if cap(b.buffered) < n {
		b.buffered = make([]int64, n)
	}
	b.buffered = b.buffered[:n]
	clear(b.buffered)
	for it.Rem() > 0 {
		i, c := it.Next()
		if i >= 0 && i < n {
			b.buffered[i] = c
		}
	}
	key := b.keyHash(r.Key)
	b.scratch = b.cand.Candidates(b.scratch[:0], key)
	w := b.scratch[0]
	for _, c := range b.scratch[1:] {
		if b.buffered[c] < b.buffered[w] || (b.buffered[c] == b.buffered[w] && b.sent[c] < b.sent[w]) {
			w = c
		}
	}
	b.sent[w]++
	return w
}
