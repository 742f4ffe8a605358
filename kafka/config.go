package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
)

// Config is what the producer, the workers and the merge stage of one job
// share. The zero value is not valid: Brokers, the three topics,
// InputPartitions and Group are required.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Input is the topic the Producer writes and the workers read; it must
	// have exactly InputPartitions partitions.
	Input string
	// Partials is the intermediate topic: workers write partial aggregates
	// to it, hash-partitioned by key (the XXH64 of the key bytes), and the
	// merge stage reads it.
	Partials string
	// Output is the topic of final results.
	Output string
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
	for _, t := range [][2]string{{"Input", c.Input}, {"Partials", c.Partials}, {"Output", c.Output}, {"Group", c.Group}} {
		if t[1] == "" {
			return invalidParam(t[0], `""`, "a name")
		}
	}
	if c.Input == c.Partials || c.Input == c.Output || c.Partials == c.Output {
		return invalidParam("topics", []string{c.Input, c.Partials, c.Output}, "three distinct topics")
	}
	if c.InputPartitions <= 0 {
		return invalidParam("InputPartitions", c.InputPartitions, "> 0")
	}
	if c.AllowedLateness < 0 {
		return invalidParam("AllowedLateness", c.AllowedLateness, ">= 0")
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
