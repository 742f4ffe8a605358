package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/datasets"
)

// cli runs the command line and returns its exit status, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeFile writes a temporary data file and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func decodeStrict[T any](t *testing.T, s string) []T {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var rows []T
	require.NoError(t, dec.Decode(&rows))
	return rows
}

func parseBenchfmt(t *testing.T, s string) []*benchfmt.Result {
	t.Helper()
	rd := benchfmt.NewReader(strings.NewReader(s), "stdout")
	var res []*benchfmt.Result
	for rd.Scan() {
		switch r := rd.Result().(type) {
		case *benchfmt.Result:
			res = append(res, r.Clone())
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", r)
		}
	}
	require.NoError(t, rd.Err())
	return res
}

func TestDefaultReduced(t *testing.T) {
	// The embedded default (every partitioner, Zipf 1.5 over 10^6 keys, 8
	// workers, modelled service time) on a reduced stream.
	code, out, errs := cli(t, "-tuples", "60000", "-work", "model:1us", "-output", "json", "-quiet")
	require.Equal(t, 0, code, errs)
	require.Empty(t, errs, "nothing but results, and no progress line off a terminal")
	rows := decodeStrict[bench.RunRow](t, out)
	var names []string
	by := map[string]bench.RunRow{}
	for _, r := range rows {
		names = append(names, r.Partitioner)
		by[r.Partitioner] = r
		require.Equal(t, 8, r.Workers)
		require.Equal(t, 1.5, *r.ZipfS)
		require.EqualValues(t, 1_000_000, r.Keys)
		require.EqualValues(t, 60000, r.Tuples)
		require.EqualValues(t, 1, r.Seed)
		require.EqualValues(t, 60000, r.LatencyMs.Count, "one latency per record")
		require.Greater(t, r.ThroughputTPS, 0.0)
		var sum uint64
		for _, l := range r.WorkerLoad {
			sum += l
		}
		require.EqualValues(t, 60000, sum, "every record counted on one worker")
	}
	require.Equal(t, strings.Split(defaultPartitioners, ","), names)
	// The hottest key carries 38% of a Zipf(1.5) stream: key grouping
	// leaves one worker with about 3x the average; D-Choices and W-Choices
	// spread it (once their detectors have seen the head: tens of thousands
	// of records), replicating only the head.
	require.Greater(t, by["hash"].Imbalance, 1.5)
	require.InDelta(t, 1, by["hash"].Replication, 1e-12)
	for _, p := range []string{"dchoices", "wchoices", "shuffle"} {
		require.Less(t, by[p].Imbalance, 0.05, p)
		require.Greater(t, by[p].Replication, 1.0, p)
	}
	require.Less(t, by["dchoices"].Replication, by["shuffle"].Replication)
}

func TestRunOutputs(t *testing.T) {
	args := []string{"run", "-tuples", "3000", "-workers", "2,3", "-partitioner", "hash,shuffle", "-work", "none", "-seed", "42", "-quiet"}
	t.Run("table", func(t *testing.T) {
		code, out, errs := cli(t, args...)
		require.Equal(t, 0, code, errs)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 6)
		require.Contains(t, lines[0], "seed=42")
		require.Regexp(t, `PARTITIONER\s+WORKERS\s+TUPLES\s+SECONDS\s+TUPLES/s\s+P50ms\s+P95ms\s+P99ms\s+P99\.9ms\s+IMBALANCE\s+REPLICATION\s+HEAP-MiB`, lines[1])
		require.Regexp(t, `^\s+hash\s+2\s+3000\s`, lines[2])
		require.Regexp(t, `^\s+shuffle\s+3\s+3000\s.*\s0\.0000\s+[12]\.\d{3}\s`, lines[5])
	})
	t.Run("csv", func(t *testing.T) {
		code, out, errs := cli(t, append(args, "-output", "csv")...)
		require.Equal(t, 0, code, errs)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, 5)
		var want []string
		for _, c := range (bench.RunRow{}).Cells() {
			want = append(want, c.Name)
		}
		require.Equal(t, want, recs[0])
		require.Equal(t, []string{"partitioner", "workload", "zipf_s", "keys", "workers"}, recs[0][:5])
		require.Contains(t, recs[0], "throughput_tps")
		require.Contains(t, recs[0], "latency_ms_p999")
		require.Equal(t, "42", recs[1][10])
	})
	t.Run("json", func(t *testing.T) {
		code, out, errs := cli(t, append(args, "-output", "json")...)
		require.Equal(t, 0, code, errs)
		rows := decodeStrict[bench.RunRow](t, out)
		require.Len(t, rows, 4)
		var raw []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		for _, k := range []string{"partitioner", "workers", "zipf_s", "tuples", "throughput_tps", "latency_ms", "imbalance", "replication", "seed"} {
			require.Contains(t, raw[0], k)
		}
		lat := raw[0]["latency_ms"].(map[string]any)
		for _, k := range []string{"p50", "p95", "p99", "p999", "max"} {
			require.Contains(t, lat, k)
		}
		require.Equal(t, []uint64{1000, 1000, 1000}, rows[3].WorkerLoad, "shuffle deals 3000 records evenly")
		require.Greater(t, rows[3].Replication, 1.0)
		require.LessOrEqual(t, rows[3].Replication, 3.0)
		require.InDelta(t, 1, rows[0].Replication, 1e-12, "hash keeps a key on one worker")
	})
	t.Run("benchfmt", func(t *testing.T) {
		code, out, errs := cli(t, append(args, "-output", "benchfmt")...)
		require.Equal(t, 0, code, errs)
		res := parseBenchfmt(t, out)
		require.Len(t, res, 4)
		require.True(t, strings.HasPrefix(string(res[0].Name), "Run/partitioner=hash/"), string(res[0].Name))
		require.Contains(t, string(res[0].Name), "/workers=2/")
		v, ok := res[0].Value("tuples/s")
		require.True(t, ok)
		require.Greater(t, v, 0.0)
		_, ok = res[0].Value("p99-ms")
		require.True(t, ok)
		require.Equal(t, "42", string(res[0].GetConfig("seed")))
	})
	t.Run("count", func(t *testing.T) {
		code, out, errs := cli(t, "run", "-tuples", "1000", "-workers", "2", "-partitioner", "hash", "-work", "none", "-count", "3", "-output", "benchfmt", "-quiet")
		require.Equal(t, 0, code, errs)
		res := parseBenchfmt(t, out)
		require.Len(t, res, 3, "one result per repetition, same name: benchstat's samples")
		require.Equal(t, res[0].Name, res[2].Name)
	})
	t.Run("sources", func(t *testing.T) {
		code, out, errs := cli(t, "run", "-tuples", "2000", "-workers", "2", "-sources", "1,2", "-partitioner", "hash", "-work", "none", "-quiet")
		require.Equal(t, 0, code, errs)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 4)
		require.Contains(t, lines[0], " sources=1,2 ")
		require.Regexp(t, `PARTITIONER\s+WORKERS\s+SOURCES\s+TUPLES`, lines[1])
		require.Regexp(t, `^\s+hash\s+2\s+1\s+2000\s`, lines[2])
		require.Regexp(t, `^\s+hash\s+2\s+2\s+2000\s`, lines[3])
	})
	t.Run("plot", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "run.svg")
		code, _, errs := cli(t, append(args, "-plot", p)...)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(b), "<svg")
		require.Contains(t, string(b), "Throughput")
	})
}

func TestRunWindowAndRate(t *testing.T) {
	code, out, errs := cli(t, "run", "-tuples", "2000", "-workers", "2", "-partitioner", "pkg", "-work", "none",
		"-rate", "50000", "-window", "10ms", "-sources", "2", "-output", "json", "-quiet")
	require.Equal(t, 0, code, errs)
	rows := decodeStrict[bench.RunRow](t, out)
	require.Len(t, rows, 1)
	r := rows[0]
	require.Equal(t, "event-time", r.LatencyKind)
	require.Equal(t, 50000.0, r.OfferedTPS)
	require.Equal(t, 2, r.Sources)
	require.GreaterOrEqual(t, r.Replication, 1.0)
	require.LessOrEqual(t, r.Replication, 2.0, "PKG keeps a key on at most two workers")
	require.Greater(t, r.LatencyMs.Count, int64(0))
}

func TestPartitionCommand(t *testing.T) {
	// A hand-made item stream: item 7 twelve times, items 1..4 once each
	// (16 records, 5 distinct, p1 = 12/16).
	items := writeFile(t, "items.dat", strings.Repeat("7 ", 12)+"\n1 2 3 4\n")
	code, out, errs := cli(t, "partition", "-file", items, "-format", "items", "-workers", "4", "-partitioner", "hash,shuffle",
		"-tuples", "16", "-period", "16", "-output", "json")
	require.Equal(t, 0, code, errs)
	rows := decodeStrict[bench.PartitionRow](t, out)
	require.Len(t, rows, 2)
	h, s := rows[0], rows[1]
	require.Equal(t, "items.dat", h.Workload)
	require.EqualValues(t, 16, h.Tuples)
	require.Equal(t, 5, h.Distinct)
	require.InDelta(t, 0.75, h.P1, 1e-12)
	require.InDelta(t, 1, h.Replication, 1e-12, "hash keeps each key on one worker")
	require.InDelta(t, 5, h.AggregationCost, 1e-12, "one partial per key")
	require.GreaterOrEqual(t, h.Imbalance, 2.0, "item 7 alone puts 12 of 16 on one worker: λ >= (12-4)/4")
	require.InDelta(t, 0, s.Imbalance, 1e-12, "16 records dealt over 4 workers")
	// shuffle: item 7 reaches all 4 workers, the 4 singletons one each.
	require.InDelta(t, 8.0/5, s.Replication, 1e-12)
	require.InDelta(t, 8, s.AggregationCost, 1e-12)

	t.Run("sweep and plot", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "imb.png")
		code, out, errs := cli(t, "partition", "-zipf-s", "0.5:1.5:0.5", "-workers", "5,10", "-keys", "1000",
			"-partitioner", "hash,dchoices", "-tuples", "20000", "-output", "csv", "-plot", p)
		require.Equal(t, 0, code, errs)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, 1+3*2*2)
		require.Equal(t, "partitioner", recs[0][0])
		require.Equal(t, "1.5", recs[12][2])
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "\x89PNG", string(b[:4]))
	})
}

func TestSketchCommand(t *testing.T) {
	// 100 words: "the" ×50, "of" ×20, "and" ×10, and 20 distinct others.
	// At support 0.1 (10 records) the heavy hitters are the, of and and.
	var b strings.Builder
	b.WriteString(strings.Repeat("The ", 50) + strings.Repeat("of ", 20) + strings.Repeat("AND, ", 10))
	for i := range 20 {
		b.WriteString("w" + string(rune('a'+i)) + " ")
	}
	words := writeFile(t, "words.txt", b.String())
	code, out, errs := cli(t, "sketch", "-file", words, "-format", "words", "-support", "0.1", "-epsilon", "0.01", "-output", "json")
	require.Equal(t, 0, code, errs)
	rows := decodeStrict[bench.SketchRow](t, out)
	require.Len(t, rows, len(strings.Split(defaultSketches, ",")))
	for _, r := range rows {
		require.EqualValues(t, 100, r.Tuples)
		require.Equal(t, 23, r.DistinctExact)
		switch r.Sketch {
		case "hyperloglog":
			require.InDelta(t, 23, float64(*r.DistinctEstimate), 1, "HLL is near exact at 23 distinct")
		case "ultraloglog":
			require.InDelta(t, 23, float64(*r.DistinctEstimate), 2, "ULL at 23 distinct keys in 2^14 registers")
		case "countmin", "countmin-cu":
			require.GreaterOrEqual(t, *r.OverMean, 0.0)
		case "lossy", "spacesaving":
			require.Equal(t, 1.0, *r.Recall)
			require.Equal(t, 1.0, *r.Precision)
			got := map[string][2]uint64{}
			for _, h := range r.HeavyHitters {
				got[h.Name] = [2]uint64{h.Exact, *h.EstimateUpper}
			}
			require.Equal(t, map[string][2]uint64{"the": {50, 50}, "of": {20, 20}, "and": {10, 10}}, got, r.Sketch)
			require.Nil(t, r.ZipfS, "a file has no exponent")
		}
	}
	t.Run("table and benchfmt", func(t *testing.T) {
		code, out, errs := cli(t, "sketch", "-file", words, "-support", "0.1", "-epsilon", "0.01")
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "# streambench sketch workload=words.txt tuples=100 distinct=23 support=0.1\n", "a words file: no exponent, no key count, no seed")
		require.Regexp(t, `spacesaving\s+the\s+50\s+50\s+50\s+ok`, out)
		code, out, errs = cli(t, "sketch", "-file", words, "-support", "0.1", "-epsilon", "0.01", "-output", "benchfmt")
		require.Equal(t, 0, code, errs)
		res := parseBenchfmt(t, out)
		require.Len(t, res, len(strings.Split(defaultSketches, ",")))
		v, ok := res[0].Value("rel-err")
		require.True(t, ok)
		require.Less(t, v, 0.05)
	})
	t.Run("quantiles", func(t *testing.T) {
		// 100 values: KLL (k = 200) holds them all, so its rank errors are
		// 0; DDSketch's relative errors are within α. -seed draws the
		// values, so a words file takes it.
		code, out, errs := cli(t, "sketch", "-file", words, "-sketches", "kll,ddsketch", "-values", "uniform", "-alpha", "0.02", "-seed", "3", "-output", "json")
		require.Equal(t, 0, code, errs)
		rows := decodeStrict[bench.SketchRow](t, out)
		require.Len(t, rows, 2)
		for _, r := range rows {
			require.Equal(t, "uniform", r.Values)
			require.Len(t, r.Quantiles, len(bench.QuantileRanks))
			require.Nil(t, r.DistinctEstimate)
			require.Positive(t, r.MemoryBytes)
			for i, q := range r.Quantiles {
				require.Equal(t, bench.QuantileRanks[i], q.Q)
				if r.Sketch == "kll" {
					require.Zero(t, q.RankError, "q=%v", q.Q)
				} else {
					require.LessOrEqual(t, q.RelError, 0.02, "q=%v", q.Q)
				}
			}
		}
		require.Equal(t, "alpha=0.02,maxBins=2048", rows[1].Params)
		require.Equal(t, 0.02, *rows[1].ErrorBound)
		code, out, errs = cli(t, "sketch", "-file", words, "-sketches", "kll,ddsketch", "-values", "uniform", "-seed", "3")
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "# streambench sketch workload=words.txt tuples=100 distinct=23 values=uniform seed=3\n")
		require.Contains(t, out, "# streambench sketch quantiles values=uniform\n")
		require.Regexp(t, `\n\s+kll\s+0\.999\s+[0-9.]+\s+[0-9.]+\s+[0-9.e-]+\s+0\.0000\n`, out)
		require.NotContains(t, out, "PRECISION", "no key sketch ran: their columns are left out")
	})
	t.Run("synthetic", func(t *testing.T) {
		code, out, errs := cli(t, "sketch", "-zipf-s", "1.2", "-keys", "10000", "-tuples", "50000", "-sketches", "hyperloglog,spacesaving", "-output", "csv")
		require.Equal(t, 0, code, errs)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Len(t, recs, 3)
		require.Equal(t, "sketch", recs[0][0])
	})
}

func TestDataReadable(t *testing.T) {
	// The docs' sketch figures run on the repository's data sets: they must
	// be there (fail; skip only in the module cache, which leaves data/ out).
	for _, name := range []string{"pg135-les-miserables.txt", "retail.dat"} {
		_, err := datasets.DataFile(name)
		if errors.Is(err, datasets.ErrNotShipped) {
			t.Skip(err)
		}
		require.NoError(t, err)
	}
}

func TestFindSustainable(t *testing.T) {
	// Two workers that each serve one record per 50 µs (modelled): at most
	// 40,000 records/s. The search reports the highest offered rate whose
	// latency stayed flat, with every trial it ran.
	code, out, errs := cli(t, "run", "-workload", "uniform", "-keys", "1000", "-workers", "2", "-partitioner", "shuffle",
		"-work", "model:50us", "-duration", "250ms", "-find-sustainable", "-output", "json", "-quiet")
	require.Equal(t, 0, code, errs)
	rows := decodeStrict[bench.RunRow](t, out)
	require.Len(t, rows, 1)
	r := rows[0]
	require.NotNil(t, r.SustainableTPS)
	require.NotEmpty(t, r.Trials)
	best := 0.0
	for _, tr := range r.Trials {
		if tr.Sustainable {
			best = max(best, tr.Rate)
		}
	}
	require.Equal(t, best, *r.SustainableTPS, "the answer is the fastest sustainable trial")
	require.Greater(t, best, 0.0)
	require.LessOrEqual(t, best, 40000*1.1, "no trial above the modelled capacity can be sustainable")

	code, out, errs = cli(t, "run", "-workload", "uniform", "-keys", "1000", "-workers", "2", "-partitioner", "shuffle",
		"-work", "model:50us", "-duration", "250ms", "-find-sustainable", "-quiet")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "SUSTAINABLE/s")
	require.Contains(t, out, " window=0s duration=250ms seed=1\n", "the header echoes -duration")
}

func TestHeadersEchoWhatRan(t *testing.T) {
	// A file has no exponent and no key count: the header shows neither,
	// and the tuple count is what the file gave, not what -tuples asked.
	items := writeFile(t, "items.dat", strings.Repeat("7 ", 12)+"\n1 2 3 4\n")
	for _, tc := range []struct {
		args   []string
		header string
	}{
		{[]string{"run", "-file", items, "-format", "items", "-partitioner", "hash", "-workers", "2", "-work", "none"},
			"# streambench run workload=items.dat sources=1 work=none rate=0 batch=512 window=0s seed=1\n"},
		{[]string{"partition", "-file", items, "-format", "items", "-partitioner", "hash", "-workers", "2"},
			"# streambench partition workload=items.dat tuples=16 detector=default seed=1\n"},
		{[]string{"sketch", "-file", items, "-format", "items", "-sketches", "hyperloglog"},
			"# streambench sketch workload=items.dat tuples=16 distinct=5\n"},
		{[]string{"sketch", "-workload", "uniform", "-keys", "100", "-tuples", "1000", "-sketches", "countmin"},
			"# streambench sketch workload=uniform keys=100 tuples=1000 distinct=100 seed=1\n"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			code, out, errs := cli(t, append(tc.args, "-quiet")...)
			require.Equal(t, 0, code, errs)
			require.True(t, strings.HasPrefix(out, tc.header), out)
			code, out, errs = cli(t, append(tc.args, "-quiet", "-output", "json")...)
			require.Equal(t, 0, code, errs)
			var rows []map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &rows))
			if tc.args[2] == items {
				require.NotContains(t, rows[0], "zipf_s", "a file has no exponent")
			} else {
				require.Equal(t, 0.0, rows[0]["zipf_s"], "uniform is s = 0")
			}
		})
	}
}

// TestRunReadsFileWhole: run reads a -file whole unless -tuples bounds
// it (also with -tuples 0), and says on stderr when -tuples cuts it; the
// replayable form, which measures no latency, shows it as "-".
func TestRunReadsFileWhole(t *testing.T) {
	items := writeFile(t, "items.dat", strings.Repeat("7 1 2 3 4\n", 200)) // 1000 records
	for _, args := range [][]string{nil, {"-tuples", "0"}} {
		a := append([]string{"run", "-file", items, "-format", "items", "-workers", "2", "-partitioner", "hash", "-work", "none", "-output", "json"}, args...)
		code, out, errs := cli(t, a...)
		require.Equal(t, 0, code, errs)
		require.NotContains(t, errs, "reads")
		rows := decodeStrict[bench.RunRow](t, out)
		require.Len(t, rows, 1)
		require.EqualValues(t, 1000, rows[0].Tuples, args)
	}
	code, out, errs := cli(t, "run", "-file", items, "-format", "items", "-workers", "2", "-partitioner", "hash", "-work", "none", "-tuples", "300", "-output", "json")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "-tuples 300 reads 300 of the 1000 records of "+items)
	require.EqualValues(t, 300, decodeStrict[bench.RunRow](t, out)[0].Tuples)

	code, out, errs = cli(t, "run", "-file", items, "-format", "items", "-workers", "2", "-partitioner", "hash", "-work", "none", "-checkpoint-dir", t.TempDir())
	require.Equal(t, 0, code, errs)
	row := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[2])
	require.Equal(t, []string{"hash", "2", "1000"}, row[:3])
	require.Equal(t, []string{"-", "-", "-", "-"}, row[5:9], "no latency measured: %q", out)
}
