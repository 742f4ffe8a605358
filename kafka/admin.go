package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func checkBrokers(brokers []string) error {
	if len(brokers) == 0 {
		return invalidParam("Brokers", "none", "at least one host:port")
	}
	for _, b := range brokers {
		if b == "" {
			return invalidParam("Brokers", fmt.Sprintf("%q", brokers), "no empty address")
		}
	}
	return nil
}

// TopicPartitions returns the partition count of each topic, asking the
// brokers cl is connected to. A missing topic fails with ErrTopic; brokers
// that do not answer before ctx ends fail with ErrUnreachable.
func TopicPartitions(ctx context.Context, cl *kgo.Client, topics ...string) (map[string]int, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata request: %w", ErrUnreachable, err)
	}
	out := make(map[string]int, len(topics))
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("%w: topic %q: %w", ErrTopic, name, err)
		}
		out[name] = len(t.Partitions)
	}
	for _, t := range topics {
		if _, ok := out[t]; !ok {
			return nil, fmt.Errorf("%w: topic %q: not in the metadata", ErrTopic, t)
		}
	}
	return out, nil
}

// checkPartitions verifies that topic has exactly want partitions.
func checkPartitions(ctx context.Context, cl *kgo.Client, topic, param string, want int) (int, error) {
	got, err := TopicPartitions(ctx, cl, topic)
	if err != nil {
		return 0, err
	}
	n := got[topic]
	if want > 0 && n != want {
		return 0, fmt.Errorf("%w: topic %q has %d partitions, %s configures %d", ErrTopic, topic, n, param, want)
	}
	return n, nil
}

// CreateTopic creates topic with the given partitions and the brokers'
// default replication. An existing topic is accepted when its partition
// count matches, and reported with ErrTopic when it does not.
func CreateTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int) error {
	if partitions <= 0 {
		return invalidParam("partitions", partitions, "> 0")
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = int32(partitions)
	rt.ReplicationFactor = -1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("%w: create topic %q: %w", ErrUnreachable, topic, err)
	}
	for _, t := range resp.Topics {
		err := kerr.ErrorForCode(t.ErrorCode)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			_, err = checkPartitions(ctx, cl, topic, "CreateTopic", partitions)
			return err
		}
		if err != nil {
			return fmt.Errorf("%w: create topic %q: %w", ErrTopic, topic, err)
		}
	}
	// The metadata may lag the creation: ask again until it shows the
	// topic, backing off.
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		_, err := checkPartitions(ctx, cl, topic, "CreateTopic", partitions)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// newClient builds a franz-go client for the brokers with this package's
// options, then the user's (which win). A client that joins no group
// (opts without kgo.ConsumerGroup) skips the user's group options.
func newClient(brokers []string, user []kgo.Opt, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(clientOpts(brokers, user, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: client options: %w", ErrInvalidParameter, err)
	}
	return cl, nil
}

// clientOpts are newClient's options.
func clientOpts(brokers []string, user []kgo.Opt, opts ...kgo.Opt) []kgo.Opt {
	all := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	group := false
	for _, o := range opts {
		if _, ok := o.(kgo.GroupOpt); ok {
			group = true
		}
	}
	for _, o := range user {
		if _, ok := o.(kgo.GroupOpt); ok && !group {
			continue
		}
		all = append(all, o)
	}
	return all
}
