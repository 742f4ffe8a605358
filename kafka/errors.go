package kafka

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them (or a
// context error), so callers test with errors.Is.
var (
	// ErrInvalidParameter reports a configuration value outside its domain;
	// the message names it.
	ErrInvalidParameter = errors.New("kafka: invalid parameter")
	// ErrUnreachable reports brokers that could not be asked for metadata
	// before the context ended.
	ErrUnreachable = errors.New("kafka: brokers unreachable")
	// ErrBrokersUnreachable reports a running Worker or Merge that stopped
	// because the brokers did not answer for Config.UnreachableTimeout: a
	// wait on them (a poll, a flush, an offset commit, a transaction's
	// begin or end, the merge end) lasted that long, or every request the
	// stage's client sent failed for that long. The message names the
	// stage, its group and the operation. It wraps ErrUnreachable, so
	// errors.Is(err, ErrUnreachable) holds too.
	ErrBrokersUnreachable = fmt.Errorf("%w for longer than Config.UnreachableTimeout", ErrUnreachable)
	// ErrProduce reports records the brokers did not acknowledge (a stage
	// or a Producer stops on the first): the message names the topic and
	// wraps the client's error, a kerr error the brokers answered with or
	// one of kgo's record errors (kgo.ErrRecordTimeout, ErrRecordRetries).
	ErrProduce = errors.New("kafka: produce failed")
	// ErrTopic reports a topic that is missing or whose partition count is
	// not the configured one.
	ErrTopic = errors.New("kafka: topic mismatch")
	// ErrCorrupt reports a record that is not a valid encoding.
	ErrCorrupt = errors.New("kafka: corrupt record")
	// ErrVersion reports a record written by a newer, unknown version.
	ErrVersion = errors.New("kafka: unsupported record version")
	// ErrFenced reports, under ExactlyOnce, a Worker or Merge whose
	// transactional producer the brokers refused because a newer stage
	// with its TransactionalID started (PRODUCER_FENCED from the
	// transaction coordinator, INVALID_PRODUCER_EPOCH from a partition
	// leader): the stage is a zombie, its Run returns this error, and it
	// must not be restarted with that ID while the newer one runs.
	ErrFenced = errors.New("kafka: fenced by a newer stage with the same transactional ID")
)

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// produceError is the failure of a record produced to topic.
func produceError(topic string, err error) error {
	return fmt.Errorf("%w: topic %q: %w", ErrProduce, topic, err)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
