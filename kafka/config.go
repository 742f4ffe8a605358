package kafka

import (
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
	// ClientOpts are added to every franz-go client this package builds
	// (TLS, SASL, timeouts, producer settings).
	ClientOpts []kgo.Opt
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
	return nil
}

func (c *Config) commitInterval() time.Duration {
	if c.CommitInterval == 0 {
		return 200 * time.Millisecond
	}
	return c.CommitInterval
}
