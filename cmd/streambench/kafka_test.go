package main

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/kafka/kafkabench"
)

func TestKafkaCommand(t *testing.T) {
	t.Run("kfake", func(t *testing.T) {
		// Two worker counts of one partitioner, each a whole pipeline; the
		// stream is uniform (s = 0) over 1000 keys, which the rows echo and
		// key grouping spreads within a factor of two of the mean.
		code, out, errs := cli(t, "kafka", "-tuples", "2000", "-keys", "1000", "-zipf-s", "0", "-partitioner", "hash", "-workers", "1,2", "-output", "json", "-quiet")
		require.Equal(t, exitOK, code, errs)
		rows := decodeStrict[kafkabench.Row](t, out)
		require.Len(t, rows, 2)
		for i, r := range rows {
			require.Equal(t, "hash", r.Partitioner)
			require.Equal(t, i+1, r.Workers)
			require.True(t, r.Exact, "exact counts")
			require.Len(t, r.RecordsPerPartition, 12)
			require.EqualValues(t, 2000, r.Tuples)
			require.Equal(t, 0.0, *r.ZipfS)
			require.EqualValues(t, 1000, r.Keys)
			require.Less(t, r.MaxOverAvg, 2.0, "s = 0 ran: no hot key")
		}
		require.Equal(t, rows[0].RecordsPerPartition, rows[1].RecordsPerPartition, "routing does not depend on the workers")
	})
	t.Run("semantics", func(t *testing.T) {
		// Both semantics of one partitioner, in the order given: exact
		// counts, and under exactly-once one result read per window.
		code, out, errs := cli(t, "kafka", "-tuples", "2000", "-keys", "500", "-partitioner", "pkg", "-semantics", "exactly-once,at-least-once", "-output", "json", "-quiet")
		require.Equal(t, exitOK, code, errs)
		rows := decodeStrict[kafkabench.Row](t, out)
		require.Len(t, rows, 2)
		for i, r := range rows {
			require.Equal(t, []string{"exactly-once", "at-least-once"}[i], r.Semantics)
			require.True(t, r.Exact, "exact counts")
			require.Positive(t, r.ThroughputTPS)
		}
		require.Equal(t, rows[0].Windows, rows[0].Results)
	})
	t.Run("csv and file", func(t *testing.T) {
		words := writeFile(t, "w.txt", strings.Repeat("a b a c a ", 40))
		code, out, errs := cli(t, "kafka", "-file", words, "-partitioner", "dchoices", "-output", "csv", "-quiet")
		require.Equal(t, exitOK, code, errs)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, 2)
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		require.Equal(t, "true", recs[1][col["exact"]])
		require.Equal(t, "200", recs[1][col["tuples"]], "the file's 200 words, not the default -tuples")
		require.Equal(t, "", recs[1][col["zipf_s"]], "a file has no exponent")
		require.Equal(t, "w.txt", recs[1][col["workload"]])
	})
	t.Run("source partitioner", func(t *testing.T) {
		// The stream written as a Java producer would (murmur2), read
		// directly and through a D-Choices repartitioner.
		code, out, errs := cli(t, "kafka", "-tuples", "3000", "-keys", "1000", "-zipf-s", "1.2", "-source-partitioner", "murmur2",
			"-partitioner", "murmur2,dchoices", "-output", "json", "-quiet")
		require.Equal(t, exitOK, code, errs)
		rows := decodeStrict[kafkabench.Row](t, out)
		require.Len(t, rows, 2)
		for i, r := range rows {
			require.Equal(t, "murmur2", r.SourcePartitioner)
			require.Equal(t, i == 1, r.Repartitioned)
			require.True(t, r.Exact, "exact counts")
			require.Len(t, r.RecordsPerWorker, 3)
		}
		require.Greater(t, rows[0].Imbalance, 4*rows[1].Imbalance, "the repartitioned input is balanced")
		code, _, errs = cli(t, "kafka", "-source-partitioner", "java")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errs, "-source-partitioner")
	})
	t.Run("existing topic", func(t *testing.T) {
		// An in-process topic filled with JSON records by a plain client,
		// keyed and timed by fields, counted exactly.
		code, out, errs := cli(t, "kafka", "-input-topic", "clicks", "-key-field", "user", "-time-field", "at", "-tuples", "2000",
			"-keys", "300", "-workers", "2", "-output", "json", "-quiet")
		require.Equal(t, exitOK, code, errs)
		rows := decodeStrict[kafkabench.Row](t, out)
		require.Len(t, rows, 1)
		require.Equal(t, "clicks", rows[0].InputTopic)
		require.Equal(t, "json", rows[0].InputFormat)
		require.True(t, rows[0].Checked)
		require.True(t, rows[0].Exact)
		require.EqualValues(t, 2000, rows[0].Tuples)
		for _, bad := range []struct {
			args []string
			flag string
		}{
			{[]string{"-input-topic", "t", "-input-format", "avro"}, "-input-format"},
			{[]string{"-input-topic", "t", "-input-format", "string", "-key-field", "k"}, "-key-field"},
			{[]string{"-input-topic", "t", "-partitioner", "pkg"}, "-partitioner"},
			{[]string{"-input-topic", "t", "-workers", "1,2"}, "-workers"},
			{[]string{"-input-topic", "t", "-semantics", "exactly-once"}, "-semantics"},
			{[]string{"-input-topic", "t", "-brokers", "127.0.0.1:1"}, "-output-topic"},
			{[]string{"-input-topic", "t", "-brokers", "127.0.0.1:1", "-output-topic", "o", "-tuples", "5"}, "-tuples"},
			{[]string{"-output-topic", "o"}, "-output-topic"},
		} {
			code, _, errs := cli(t, append([]string{"kafka"}, bad.args...)...)
			require.Equal(t, exitUsage, code, "%v: %s", bad.args, errs)
			require.Contains(t, errs, bad.flag)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// The in-process cluster is up: a run cut off by -timeout says so,
		// not that the brokers were unreachable (exit 1, the run failed);
		// a -timeout out of its domain is a usage error (exit 2).
		for _, args := range [][]string{
			{"kafka", "-timeout", "1ns", "-tuples", "100", "-partitioner", "hash", "-quiet"},
			{"kafka", "-input-topic", "clicks", "-timeout", "1ns", "-tuples", "100", "-quiet"},
		} {
			code, _, errs := cli(t, args...)
			require.Equal(t, exitError, code, "%v: %s", args, errs)
			require.Contains(t, errs, "-timeout = 1ns", args)
			require.NotContains(t, errs, "unreachable", args)
		}
		for _, bad := range []string{"0", "-1s"} {
			code, _, errs := cli(t, "kafka", "-timeout", bad, "-quiet")
			require.Equal(t, exitUsage, code, "-timeout %s: %s", bad, errs)
			require.Contains(t, errs, "-timeout")
		}
	})
	t.Run("unreachable brokers", func(t *testing.T) {
		code, _, errs := cli(t, "kafka", "-brokers", "127.0.0.1:1", "-timeout", "5s", "-tuples", "100", "-quiet")
		require.Equal(t, exitError, code)
		require.Contains(t, errs, "brokers unreachable")
	})
}
