package kafkabench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/kafka"
)

// TestRunTopic counts a topic another client filled, in each format, with
// the key and time from the record or from JSON fields: every count is
// exact and every record processed once.
func TestRunTopic(t *testing.T) {
	input := zipfInput(t, 300, 1.2, 2000, 5)
	for _, c := range []struct{ format, keyField, timeField string }{
		{"json", "", ""}, {"json", "user", "at"}, {"string", "", ""}, {"bytes", "", ""},
	} {
		t.Run(c.format+"/"+c.keyField, func(t *testing.T) {
			ctx := testContext(t)
			row, err := RunTopic(ctx, TopicConfig{InputTopic: "events", Format: c.format, KeyField: c.keyField, TimeField: c.timeField,
				Partitions: 6, PartialsPartitions: 2, Workers: 2, Window: 100 * time.Millisecond, Input: input})
			require.NoError(t, err)
			require.True(t, row.Checked)
			require.True(t, row.Exact, "exact counts")
			require.EqualValues(t, 2000, row.Tuples)
			require.Len(t, row.RecordsPerPartition, 6)
			var sum int64
			for _, n := range row.RecordsPerWorker {
				sum += n
			}
			require.GreaterOrEqual(t, sum, int64(2000))
			require.Equal(t, "events", row.InputTopic)
		})
	}
}

func TestTopicConfigErrors(t *testing.T) {
	input := zipfInput(t, 10, 1, 10, 1)
	good := TopicConfig{InputTopic: "in", Format: "json", Partitions: 2, PartialsPartitions: 1, Workers: 1, Window: time.Second, Input: input}
	for _, tc := range []struct {
		name string
		edit func(*TopicConfig)
	}{
		{"-input-topic", func(c *TopicConfig) { c.InputTopic = "" }},
		{"-output-topic", func(c *TopicConfig) { c.Brokers = []string{"127.0.0.1:1"} }},
		{"-output-topic", func(c *TopicConfig) { c.OutputTopic = "in" }},
		{"-input-format", func(c *TopicConfig) { c.Format = "avro" }},
		{"-key-field", func(c *TopicConfig) { c.Format, c.KeyField = "string", "user" }},
		{"-time-field", func(c *TopicConfig) { c.Format, c.TimeField = "bytes", "at" }},
		{"-partials-partitions", func(c *TopicConfig) { c.PartialsPartitions = 0 }},
		{"-workers", func(c *TopicConfig) { c.Workers = 0 }},
		{"-window", func(c *TopicConfig) { c.Window = 0 }},
		{"-out-of-orderness", func(c *TopicConfig) { c.OutOfOrderness = -1 }},
		{"-partitions", func(c *TopicConfig) { c.Partitions = 0 }},
		{"-tuples", func(c *TopicConfig) { c.Input = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			_, err := RunTopic(context.Background(), cfg)
			require.ErrorIs(t, err, kafka.ErrInvalidParameter)
			require.ErrorContains(t, err, tc.name+" = ")
		})
	}
}

// FuzzFieldDecoder: the JSON field decoder never panics and reports what
// it refuses as corrupt.
func FuzzFieldDecoder(f *testing.F) {
	f.Add([]byte(`{"user":"u1","at":1700000000000}`))
	f.Add([]byte(`{"user":7,"at":"2026-12-01T09:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := (fieldDecoder{key: "user", time: "at"}).Decode(b); err != nil {
			require.ErrorIs(t, err, kafka.ErrCorrupt)
		}
	})
}
