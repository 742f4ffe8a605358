package main

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKafkaCommand(t *testing.T) {
	t.Run("kfake", func(t *testing.T) {
		code, out, errs := cli(t, "kafka", "-records", "2000", "-keys", "500", "-partitioner", "hash,dchoices", "-output", "csv", "-quiet")
		require.Equal(t, exitOK, code, errs)
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 3)
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for _, r := range rows[1:] {
			require.Equal(t, "true", r[col["exact"]], "%s: exact counts", r[col["partitioner"]])
			require.Len(t, strings.Fields(r[col["records_per_partition"]]), 12)
		}
		require.Equal(t, "hash", rows[1][col["partitioner"]])
		require.Equal(t, "dchoices", rows[2][col["partitioner"]])
	})
	t.Run("bad partitioner", func(t *testing.T) {
		code, _, errs := cli(t, "kafka", "-partitioner", "nope", "-quiet")
		require.Equal(t, exitUsage, code)
		require.Contains(t, errs, "Partitioners")
	})
	t.Run("unreachable brokers", func(t *testing.T) {
		code, _, errs := cli(t, "kafka", "-brokers", "127.0.0.1:1", "-timeout", "5s", "-quiet")
		require.Equal(t, exitError, code)
		require.Contains(t, errs, "brokers unreachable")
	})
}
