package runtime

import (
	"fmt"

	"github.com/skewerhq/skewer/partition"
)

type edgeKind uint8

const (
	edgeForward edgeKind = iota
	edgeBroadcast
	edgePartitioned
)

// Edge says how records move from the workers of one stage to those of the
// next. Every sending worker gets its own partitioner instance.
type Edge struct {
	kind    edgeKind
	name    string
	factory partition.Factory
	// opts, set by Kind, rebuild the factory per sending worker with
	// partition.WithSources(senders) first, so that hot-key detectors size
	// their windows to what one sender sees (the caller's options win), and
	// partition.WithInstance(sender) last, so that each sender breaks ties
	// as its own instance of the kind.
	opts []partition.Option
	// keyGroups: Hash, routing by key group (see MaxParallelism).
	keyGroups bool
	// splits says whether the partitioners of a partitioned edge may split
	// keys, when that is known without building one: Kind's
	// (partition.KindSplitsKeys) and Shuffle's.
	splits splitting
	// skew is a skew-aware join's table (SkewAware), on both of its
	// edges; fan, on its broadcast input's: a hot key's records go to
	// every candidate.
	skew *skewTable
	fan  bool
	// moves is a moving skew-aware join's (SkewAwareMoving), on both of
	// its edges: its senders start from its start table and route by the
	// table each barrier moves to.
	moves *hotMoves
}

// splitting is what an edge knows of whether its partitioners split keys.
type splitting uint8

const (
	splitsAsk    splitting = iota // a Factory of the caller's: ask one of its partitioners
	splitsNever                   // never: every key on one receiver
	splitsAlways                  // may send a key to several receivers
)

func splittingOf(splits bool) splitting {
	if splits {
		return splitsAlways
	}
	return splitsNever
}

// Forward sends sending worker i's records to receiving worker i mod n.
// With one sender it keeps keys together; with several it may split them.
func Forward() Edge { return Edge{kind: edgeForward, name: "forward"} }

// Broadcast sends every record to every receiving worker. It cannot feed an
// aggregation (it would count each record n times).
func Broadcast() Edge { return Edge{kind: edgeBroadcast, name: "broadcast"} }

// Hash routes by key hash: every record of a key reaches one worker, the
// owner of the key's key group (see MaxParallelism; when the receiving
// parallelism divides the job's MaxParallelism, partition.NewHash's
// placement).
func Hash() Edge { return Edge{kind: edgePartitioned, name: "hash", keyGroups: true} }

// Shuffle deals records round-robin (partition.NewShuffle).
func Shuffle() Edge {
	e := Partitioned("shuffle", func(n int) (partition.Partitioner, error) { return partition.NewShuffle(n) })
	e.splits = splitsAlways
	return e
}

// Partitioned routes with partitioners made by f, one per sending worker,
// such as PKG, D-Choices or W-Choices from package partition. If they split
// keys (partition.SplitsKeys), an aggregation behind this edge runs in two
// phases; to know, the runtime asks one partitioner that f builds when the
// aggregation is added (a Factory says nothing of its partitioners
// otherwise), before it builds one per sending worker in worker order. Kind
// knows it from the kind and builds none for that.
func Partitioned(name string, f partition.Factory) Edge {
	return Edge{kind: edgePartitioned, name: name, factory: f}
}

// Kind is Partitioned with partition.NewFactory(kind, opts...): "hash",
// "shuffle", "pkg", "dchoices", "wchoices", ... (see partition.Kinds). The
// runtime adds partition.WithSources with the number of sending workers
// ahead of opts, so a WithSources in opts overrides it, and numbers the
// sending workers' partitioners: sending worker i's is instance i of the
// kind (partition.WithInstance(i), after opts), so that the senders break
// ties between equally loaded receivers differently, as the instances of
// one factory do.
func Kind(kind string, opts ...partition.Option) (Edge, error) {
	f, err := partition.NewFactory(kind, opts...)
	if err != nil {
		return Edge{}, err
	}
	splits, err := partition.KindSplitsKeys(kind)
	if err != nil {
		return Edge{}, err
	}
	e := Partitioned(kind, f)
	e.opts = append([]partition.Option{}, opts...)
	e.splits = splittingOf(splits)
	return e, nil
}

// String names the edge.
func (e Edge) String() string { return e.name }

type forward struct{ w, n int }

func (f forward) Route(uint64) int { return f.w }
func (f forward) Workers() int     { return f.n }

// partitioner is sending worker sender's partitioner of the edge from
// senders to receivers workers in a job of maxPar key groups.
func (e Edge) partitioner(sender, senders, receivers, maxPar int) (partition.Partitioner, error) {
	switch {
	case e.kind == edgeForward:
		return forward{w: sender % receivers, n: receivers}, nil
	case e.kind == edgeBroadcast:
		return nil, nil
	case e.keyGroups:
		p, err := newKeyGroups(maxPar, receivers)
		if err != nil {
			return nil, fmt.Errorf("runtime: edge %s: %w", e.name, err)
		}
		return p, nil
	}
	if e.factory == nil {
		return nil, invalidParam("Edge.factory", "nil", "a partition.Factory")
	}
	f := e.factory
	if e.opts != nil {
		opts := make([]partition.Option, 0, len(e.opts)+2)
		opts = append(opts, partition.WithSources(max(senders, 1)))
		opts = append(append(opts, e.opts...), partition.WithInstance(sender))
		var err error
		if f, err = partition.NewFactory(e.name, opts...); err != nil {
			return nil, fmt.Errorf("runtime: edge %s: %w", e.name, err)
		}
	}
	p, err := f(receivers)
	if err != nil {
		return nil, fmt.Errorf("runtime: edge %s: %w", e.name, err)
	}
	if p.Workers() != receivers {
		return nil, fmt.Errorf("%w: edge %s made a partitioner for %d workers, want %d", ErrInvalidParameter, e.name, p.Workers(), receivers)
	}
	return p, nil
}

// splitsKeys reports whether the edge may send one key to several of the
// receivers when senders send: from the edge's kind where it says (Forward,
// Broadcast, Hash, Shuffle and Kind's edges), else from a partitioner of
// the caller's Factory.
func (e Edge) splitsKeys(senders, receivers, maxPar int) (bool, error) {
	switch {
	case e.kind == edgeForward:
		return senders > 1 && receivers > 1, nil
	case e.kind == edgeBroadcast:
		return true, nil
	case e.keyGroups:
		return false, nil
	case e.splits != splitsAsk:
		return e.splits == splitsAlways, nil
	}
	p, err := e.partitioner(0, senders, receivers, maxPar)
	if err != nil {
		return false, err
	}
	return partition.SplitsKeys(p), nil
}
