package kafka

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// Partitioner is a kgo.Partitioner backed by one of skewer's partitioners
// (see partition.Kinds): "hash" is key grouping, and "pkg", "dchoices" and
// "wchoices" balance a skewed stream by sending one key to several
// partitions. Every record is routed on the 64-bit hash of its key bytes
// (stream.HashBytes, XXH64), so sequential ids spread as well as words.
// Load is what this producer has routed, as partial key grouping
// prescribes: each producer balances its own stream, with no coordination.
// A key's records reach several partitions only under the splitting kinds
// (partition.SplitsKeys); downstream, a merge stage combines the partial
// aggregates (see Worker and Merge).
//
// Kind "murmur2" places keys as Kafka's default partitioner does
// (Murmur2Partition), so that a topic written through it co-partitions
// with topics written by Java, librdkafka and franz-go's default
// partitioners: key grouping with Kafka's hash instead of XXH64.
//
// Records without a key are placed on their Partition field, as
// kgo.ManualPartitioner does. Skewer's kinds serve at most
// partition.MaxWorkers partitions; used directly as a kgo.Partitioner on a
// larger topic they place keys by key grouping (NewProducer refuses such a
// topic instead).
type Partitioner struct {
	kind    string
	factory partition.Factory // nil for murmur2
	split   bool
	backup  bool
}

// Murmur2Kind is the kind of NewPartitioner that places keys as Kafka's
// default partitioner does.
const Murmur2Kind = "murmur2"

// PartitionerKinds are the kinds NewPartitioner takes: Murmur2Kind, then
// partition.Kinds().
func PartitionerKinds() []string { return append([]string{Murmur2Kind}, partition.Kinds()...) }

// PartitionerOpt configures NewPartitioner beyond the kind.
type PartitionerOpt struct {
	// Options are passed to partition.NewFactory (not to murmur2).
	Options []partition.Option
	// Buffered makes partitioners that expose their candidates
	// (partition.Candidater: PKG) choose, among a key's candidates, the
	// partition with the fewest records buffered in this client
	// (kgo.TopicBackupPartitioner), ties broken by the records routed: a
	// partition whose broker is slow stops receiving the keys that can go
	// elsewhere. Other kinds route as without it.
	Buffered bool
}

// stagePartitioner routes the records workers write to the partials topic
// and the merge stage to the output topic: key grouping on the key bytes.
func stagePartitioner() (*Partitioner, error) { return NewPartitioner("hash", PartitionerOpt{}) }

// NewPartitioner returns a Partitioner of the given kind (PartitionerKinds).
func NewPartitioner(kind string, o PartitionerOpt) (*Partitioner, error) {
	if kind == Murmur2Kind {
		if len(o.Options) > 0 || o.Buffered {
			return nil, invalidParam("PartitionerOpt", "options", "none with murmur2 (Kafka's placement has none)")
		}
		return &Partitioner{kind: kind}, nil
	}
	f, err := partition.NewFactory(kind, o.Options...)
	if err != nil {
		return nil, err
	}
	p, err := f(2)
	if err != nil {
		return nil, err
	}
	return &Partitioner{kind: kind, factory: f, split: partition.SplitsKeys(p), backup: o.Buffered}, nil
}

// Kind is the partitioner's kind.
func (p *Partitioner) Kind() string { return p.kind }

// SplitsKeys reports whether one key's records may reach several partitions.
func (p *Partitioner) SplitsKeys() bool { return p.split }

// ForTopic implements kgo.Partitioner: each topic gets its own instance,
// with its own load.
func (p *Partitioner) ForTopic(string) kgo.TopicPartitioner {
	if p.factory == nil {
		return murmur2Partitioner{}
	}
	t := &topicPartitioner{factory: p.factory}
	if p.backup {
		return &backupPartitioner{topicPartitioner: t}
	}
	return t
}

type murmur2Partitioner struct{}

func (murmur2Partitioner) RequiresConsistency(*kgo.Record) bool { return true }

// Partition implements kgo.TopicPartitioner. As in Kafka, a nil key is
// keyless and an empty one is hashed.
func (murmur2Partitioner) Partition(r *kgo.Record, n int) int {
	if r.Key == nil {
		return int(r.Partition)
	}
	return Murmur2Partition(r.Key, n)
}

type topicPartitioner struct {
	factory partition.Factory
	p       partition.Partitioner
	cand    partition.Candidater
	n       int
	sent    []uint64
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
	key := stream.HashBytes(r.Key)
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
	key := stream.HashBytes(r.Key)
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
