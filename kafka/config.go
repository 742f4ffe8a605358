package kafka

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
)

// Config is what the producer, the workers and the merge stage of one job
// share. The zero value is not valid: Brokers, the four topics,
// InputPartitions and Group are required.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Input is the topic the workers read: the user's records, written by
	// any producer (a Producer, or another service's client); the job never
	// writes to it. It must have exactly InputPartitions partitions.
	Input string
	// Partials is the intermediate topic: workers write partial aggregates
	// to it, hash-partitioned by key (the XXH64 of the key bytes), and the
	// merge stage reads it.
	Partials string
	// Output is the topic of final results: JSON values keyed by the
	// original key bytes, timestamped with the window's end (see
	// docs/kafka.md).
	Output string
	// Control is the job's internal coordination topic (one partition is
	// used): the end of a bounded input (EndInput) and the merge stage's
	// end of results, so that neither the input nor the output topic holds
	// control records.
	Control string
	// InputPartitions is the partition count of Input: the merge stage
	// fires a window once every input partition's watermark passed it.
	InputPartitions int
	// Group is the consumer group of the workers; the merge stage uses
	// Group + ".merge".
	Group string
	// Windows and AllowedLateness are those of the aggregation, as for
	// runtime.WindowAggregate (the zero Windows is the global window,
	// fired at the end of input).
	Windows         operators.Windows
	AllowedLateness time.Duration
	// OutOfOrderness bounds how far a record's event time may lag the
	// greatest one before it in its input partition: a partition's
	// watermark is that greatest time minus OutOfOrderness minus 1 ns
	// (operators.BoundedOutOfOrderness), and records further behind are
	// late.
	OutOfOrderness time.Duration
	// IdleTimeout, when positive, lets an input partition that sent no
	// record for that long, and whose windows have all fired, stop holding
	// the job's watermark back until its next record (Flink's idle
	// sources). Zero waits for every partition.
	IdleTimeout time.Duration
	// CommitInterval is how often workers and the merge stage commit the
	// offsets whose outputs are acknowledged. Default 200ms.
	CommitInterval time.Duration
	// Semantics is the delivery guarantee of the output topic:
	// AtLeastOnce (the zero value) or ExactlyOnce (Kafka transactions; see
	// Semantics).
	Semantics Semantics
	// TransactionalID names the transactions of one Worker under
	// ExactlyOnce (required then, ignored otherwise): give each worker of
	// the job its own, and a restarted worker the ID of the one it
	// replaces, so that its first transaction aborts the open transaction
	// of the crashed one at once (another ID leaves that transaction open,
	// holding the merge stage back, until the brokers' transaction
	// timeout). The merge stage uses TransactionalID + ".merge".
	TransactionalID string
	// UnreachableTimeout bounds how long a Worker or a Merge waits on
	// brokers that do not answer, under both Semantics: a poll, a flush,
	// an offset commit, a transaction's end or the merge end that waits
	// that long, or a client whose every connection attempt and request
	// failed for that long, stops the stage (Run returns an error wrapping
	// ErrBrokersUnreachable, naming the stage and the operation). Brokers
	// that answer with an error (a leader moved, a refused commit) are
	// reachable. Default 30s; it must be >= 0 (0: the default). The
	// franz-go knobs in ClientOpts (kgo.RequestTimeoutOverhead,
	// kgo.RetryTimeout, kgo.RecordDeliveryTimeout) bound single requests
	// and records below it.
	UnreachableTimeout time.Duration
	// ClientOpts are added to every franz-go client this package builds
	// (TLS, SASL, timeouts, producer settings). They come after the
	// stages' own options, so a rebalance callback among them
	// (kgo.OnPartitionsAssigned, OnPartitionsRevoked, OnPartitionsLost,
	// OnOffsetsFetched) replaces the stage's: a revoke then no longer
	// commits what the stage holds, and an assignment is not logged. Do
	// not pass them.
	ClientOpts []kgo.Opt
	// Logger, when set, gets the stages' structured records (log/slog) of
	// what they are given and suffer: partitions assigned, revoked and
	// lost, transactions aborted, and the failure that stops a stage
	// (fenced or not). Nil logs nothing.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if err := checkBrokers(c.Brokers); err != nil {
		return err
	}
	for _, t := range [][2]string{{"Input", c.Input}, {"Partials", c.Partials}, {"Output", c.Output}, {"Control", c.Control}, {"Group", c.Group}} {
		if t[1] == "" {
			return invalidParam(t[0], `""`, "a name")
		}
	}
	topics := []string{c.Input, c.Partials, c.Output, c.Control}
	for i := range topics {
		for j := range i {
			if topics[i] == topics[j] {
				return invalidParam("topics", topics, "four distinct topics")
			}
		}
	}
	if c.InputPartitions <= 0 {
		return invalidParam("InputPartitions", c.InputPartitions, "> 0")
	}
	if c.AllowedLateness < 0 {
		return invalidParam("AllowedLateness", c.AllowedLateness, ">= 0")
	}
	if c.OutOfOrderness < 0 {
		return invalidParam("OutOfOrderness", c.OutOfOrderness, ">= 0")
	}
	if c.IdleTimeout < 0 {
		return invalidParam("IdleTimeout", c.IdleTimeout, ">= 0")
	}
	if c.CommitInterval < 0 {
		return invalidParam("CommitInterval", c.CommitInterval, ">= 0")
	}
	if c.UnreachableTimeout < 0 {
		return invalidParam("UnreachableTimeout", c.UnreachableTimeout, ">= 0 (0: the default, 30s)")
	}
	if c.Semantics != AtLeastOnce && c.Semantics != ExactlyOnce {
		return invalidParam("Semantics", int(c.Semantics), "AtLeastOnce or ExactlyOnce")
	}
	return nil
}

// validateStage checks what a Worker or a Merge needs beyond validate.
func (c *Config) validateStage() error {
	if c.Semantics != ExactlyOnce {
		return nil
	}
	if c.TransactionalID == "" {
		return invalidParam("TransactionalID", `""`, "a name under ExactlyOnce")
	}
	if c.AllowedLateness != 0 {
		return invalidParam("AllowedLateness", c.AllowedLateness, "0 under ExactlyOnce (late firings are not replayed exactly)")
	}
	return nil
}

func (c *Config) commitInterval() time.Duration {
	if c.CommitInterval == 0 {
		return 200 * time.Millisecond
	}
	return c.CommitInterval
}

// defaultUnreachableTimeout is Config.UnreachableTimeout's default.
const defaultUnreachableTimeout = 30 * time.Second

func (c *Config) unreachableTimeout() time.Duration {
	if c.UnreachableTimeout == 0 {
		return defaultUnreachableTimeout
	}
	return c.UnreachableTimeout
}

// Semantics is a job's delivery guarantee on its output topic.
//
// AtLeastOnce: workers and the merge stage commit offsets with plain
// offset commits once their outputs are acknowledged; nothing is lost, the
// merge stage drops replayed partials, and a restarted merge stage may
// repeat a result (always with the exact value).
//
// ExactlyOnce: each stage produces inside Kafka transactions
// (kgo.GroupTransactSession) and commits its consumed offsets, with their
// metadata, in the same transaction every Config.CommitInterval; consumers
// of the partials, control and output topics read committed. A crash, a
// rebalance or a failed commit aborts the open transaction, and the stage
// (or the partition's next owner) replays from the last committed offsets:
// a consumer reading the output topic with read-committed isolation sees
// every result exactly once. A transaction whose end fails is aborted and
// stops the stage (Run returns the error); so do brokers that stay
// unreachable for Config.UnreachableTimeout (ErrBrokersUnreachable). Cost: one transaction per
// commit interval per stage, and latency: a result becomes visible when
// the merge stage's transaction commits, after the workers' transaction
// with its partials did (up to two commit intervals). AllowedLateness
// must be 0.
type Semantics int

const (
	// AtLeastOnce is the default: nothing lost, a result may repeat.
	AtLeastOnce Semantics = iota
	// ExactlyOnce writes every result once, through Kafka transactions.
	ExactlyOnce
)

// String returns "at-least-once" or "exactly-once".
func (s Semantics) String() string {
	switch s {
	case AtLeastOnce:
		return "at-least-once"
	case ExactlyOnce:
		return "exactly-once"
	}
	return fmt.Sprintf("Semantics(%d)", int(s))
}

// ParseSemantics parses "at-least-once" or "exactly-once" (ErrInvalidParameter
// naming semantics otherwise).
func ParseSemantics(s string) (Semantics, error) {
	switch s {
	case "at-least-once":
		return AtLeastOnce, nil
	case "exactly-once":
		return ExactlyOnce, nil
	}
	return 0, invalidParam("semantics", fmt.Sprintf("%q", s), `"at-least-once" or "exactly-once"`)
}
