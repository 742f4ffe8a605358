package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// badInput is one refused command line: its exit status and what the
// message must say (the flag as -h shows it, and why).
type badInput struct {
	args string // space-separated; FILE stands for a small words file
	code int
	want string
}

// badInputs is every refused command line the tests pin; docs/streambench.md
// lists the same ones in its "Bad input" table (TestBadInputDocumented).
var badInputs = []badInput{
	{"run -sources 0", 2, "-sources = 0, want a comma list of integers in [1, 4096]"},
	{"run -sources 1,1", 2, "-sources = 1, want each value at most once"},
	{"run -batch 0", 2, "-batch = 0, want in [1, 1048576]"},
	{"run -count 0", 2, "-count = 0, want >= 1"},
	{"run -tuples 0", 2, "-tuples = 0, want > 0 unless -duration is set"},
	{"run -tuples -5", 2, "-tuples = -5, want >= 0"},
	{"run -duration -1s", 2, "-duration = -1s, want >= 0"},
	{"run -workers 0", 2, "-workers = 0, want a comma list of integers in [1, 4096]"},
	{"run -workers 5000", 2, "-workers = 5000, want a comma list of integers in [1, 4096]"},
	{"run -workers 2,,3", 2, "-workers = 2,,3, want a comma list of integers"},
	{"run -rate -1", 2, "-rate = -1, want 0 (as fast as possible) or in [1e-09, 1e+09] records/s"},
	{"run -rate NaN", 2, "-rate = NaN, want 0 (as fast as possible) or in [1e-09, 1e+09] records/s"},
	{"run -rate 2e9", 2, "-rate = 2e+09, want 0 (as fast as possible) or in [1e-09, 1e+09] records/s"},
	{"run -rate 1e-300", 2, "-rate = 1e-300, want 0 (as fast as possible) or in [1e-09, 1e+09] records/s"},
	{"run -window -1s", 2, "-window = -1s, want >= 0"},
	{"run -latency-ddsketch 0.9", 2, "-latency-ddsketch = 0.9, want 0 (off) or a relative accuracy in [0.0001, 0.5]"},
	{"run -checkpoint-interval -1s", 2, "-checkpoint-interval = -1s, want >= 0 (0: no checkpoints)"},
	{"run -checkpoint-interval 1s", 2, `-checkpoint-dir = "", want a directory with -checkpoint-interval`},
	{"run -checkpoint-dir d -checkpoint-mode unaligned", 2, "-checkpoint-mode = unaligned, want aligned without -checkpoint-interval (no checkpoints to unalign)"},
	{"run -fail-after -1", 2, "-fail-after = -1, want >= 0 (0: no failure)"},
	{"run -fail-after 10 -rate 100", 2, "-rate = 100, want 0 with -checkpoint-interval, -checkpoint-dir or -fail-after (a replayable run is closed-loop)"},
	{"run -work sleep:1us", 2, `-work = "sleep", want one of none, model, spin`},
	{"run -work model:0s", 2, "-work = model:0s, want model:DURATION with DURATION in (0, 1h0m0s]"},
	{"run -work spin:1s", 2, "-work = spin:1s, want spin:DURATION with DURATION in (0, 1ms]"},
	{"run -zipf-s NaN", 2, "-zipf-s = NaN, want a number"},
	{"run -zipf-s -1", 2, "-zipf-s = -1, want exponents >= 0"},
	{"run -zipf-s 1,2", 2, "-zipf-s = 1,2, want one exponent (only partition sweeps a list)"},
	{"run -keys 0", 2, "-keys = 0, want in [1, 9007199254740992] for zipf"},
	{"run -workload exact-zipf -keys 4294967296", 2, "-keys = 4294967296, want in [1, 4294967295] for exact-zipf"},
	{"run -workload drift -drift-every -1", 2, "-drift-every = -1, want >= 0"},
	{"run -partitioner hash,random", 2, `-partitioner = "random", want one of`},
	{"run -partitioner hash,hash", 2, "-partitioner = hash, want each value at most once"},
	{"run -plot x.gif", 2, "-plot = x.gif, want a file name ending in .svg or .png"},
	{"run -plot /nonexistent/x.svg", 1, "-plot: open /nonexistent/x.svg: no such file or directory"},
	{"run -output xml", 2, `invalid value "xml" for flag -output: want one of table, csv, json, benchfmt`},
	{"run -format items", 2, "-format is not used without -file"},
	{"run -drift-every 10", 2, "-drift-every is not used with -workload zipf"},
	{"run -workload uniform -zipf-s 1", 2, "-zipf-s is not used with -workload uniform"},
	{"run -file FILE -keys 10", 2, "-keys is not used with -file"},
	{"run -file FILE -workload uniform", 2, "-workload is not used with -file"},
	{"run -file /nonexistent/words.txt", 1, "-file /nonexistent/words.txt: "},
	{"run -bogus", 2, "flag provided but not defined: -bogus"},
	{"run extra", 2, `unexpected argument "extra"`},
	{"partition -tuples 0", 2, "-tuples = 0, want in [1, 268435456]"},
	{"partition -seeds 0", 2, "-seeds = 0, want in [1, 100]"},
	{"partition -seeds 101", 2, "-seeds = 101, want in [1, 100]"},
	{"partition -tuples 300000000", 2, "-tuples = 300000000, want in [1, 268435456]"},
	{"partition -zipf-s 2:1:0.1", 2, "-zipf-s = 2:1:0.1, want from:to:step with step > 0 and to >= from"},
	{"partition -zipf-s 1,1", 2, "-zipf-s = 1, want each value at most once"},
	{"partition -sources 0", 2, "-sources = 0, want a comma list of integers in [1, 4096]"},
	{"partition -workers 5,0", 2, "-workers = 5,0, want a comma list of integers in [1, 4096]"},
	{"partition -period -1", 2, "-period = -1, want >= 0"},
	{"partition -file FILE -zipf-s 1", 2, "-zipf-s is not used with -file"},
	{"partition -plot /nonexistent/x.svg", 1, "-plot: open /nonexistent/x.svg: no such file or directory"},
	{"partition -detector psychic", 2, `invalid value "psychic" for flag -detector: want one of default, oracle, cumulative, countmin, exact, filtered, lossy, spacesaving`},
	{"partition -source-windows", 2, "-source-windows = true, want a windowed -detector (countmin, exact, filtered, lossy, spacesaving); default divides its own windows"},
	{"partition -detector oracle -source-windows", 2, "-source-windows = true, want a windowed -detector"},
	{"partition -output xml", 2, `invalid value "xml" for flag -output: want one of table, csv, json, benchfmt, grid`},
	{"run -output grid", 2, `invalid value "grid" for flag -output: want one of table, csv, json, benchfmt`},
	{"partition -workload grid-zipf -keys 20000000", 2, "-keys = 20000000, want in [1, 16777216] for grid-zipf"},
	{"detector -detector oracle", 2, `-detector = "oracle", want one of countmin, exact, filtered, lossy, spacesaving`},
	{"detector -workers 0", 2, "-workers = 0, want a comma list of integers in [1, 4096]"},
	{"detector -tuples 0", 2, "-tuples = 0, want in [1, 268435456]"},
	{"detector -plot x.svg", 2, "flag provided but not defined: -plot"},
	{"forgetting -theta 0", 2, "-theta = 0, want in [4.8828125e-05, 0.5]"},
	{"forgetting -window 0", 2, "-window = 0, want > 0"},
	{"forgetting -tuples 2", 2, "-tuples = 2, want in [4, 268435456]"},
	{"forgetting -rate 1", 2, "-rate = 1, want in (0, 1)"},
	{"forgetting -seeds -1", 2, "-seeds = -1, want a comma list of integers in [0, 4611686018427387904]"},
	{"sketch -precision 3", 2, "-precision = 3, want in [4, 18]"},
	{"sketch -precision 270", 2, "-precision = 270, want in [4, 18]"},
	{"sketch -epsilon 0.5 -support 0.1", 2, "-epsilon = 0.5, want in [1e-06, -support = 0.1)"},
	{"sketch -epsilon 0 -sketches countmin", 2, "-epsilon = 0, want in [1e-06, 1)"},
	{"sketch -delta 1", 2, "-delta = 1, want in (0, 1)"},
	{"sketch -support 0", 2, "-support = 0, want in (0, 1]"},
	{"sketch -sketches bloom", 2, `-sketches = "bloom", want one of hyperloglog, ultraloglog, countmin, countmin-cu, lossy, spacesaving, kll, ddsketch`},
	{"sketch -sketches countmin -support 0.1", 2, "-support is not used by -sketches countmin (only by lossy, spacesaving)"},
	{"sketch -sketches lossy -precision 12", 2, "-precision is not used by -sketches lossy (only by hyperloglog, ultraloglog)"},
	{"sketch -file FILE -seed 2", 2, "-seed is not used here with a words file (nothing is sampled)"},
	{"sketch -sketches kll -k 4", 2, "-k = 4, want in [8, 65535]"},
	{"sketch -sketches ddsketch -alpha 0.7", 2, "-alpha = 0.7, want in [1e-06, 0.5]"},
	{"sketch -sketches kll -values normal", 2, `invalid value "normal" for flag -values: want one of lognormal, pareto, uniform`},
	{"sketch -values pareto", 2, "-values is not used by -sketches hyperloglog,ultraloglog,countmin,countmin-cu,lossy,spacesaving (only by kll, ddsketch)"},
	{"sketch -sketches kll -alpha 0.02", 2, "-alpha is not used by -sketches kll (only by ddsketch)"},
	{"sketch -workload pareto", 2, `invalid value "pareto" for flag -workload: want one of zipf, exact-zipf, grid-zipf, uniform, drift`},
	{"kafka -zipf-s -1", 2, "-zipf-s = -1, want exponents >= 0"},
	{"kafka -keys 0", 2, "-keys = 0, want in [1, 9007199254740992] for zipf"},
	{"kafka -workers 0", 2, "-workers = 0, want a comma list of integers in [1, 4096]"},
	{"kafka -tuples 0", 2, "-tuples = 0, want in [1, 268435456]"},
	{"kafka -records 1000", 2, "flag provided but not defined: -records"},
	{"kafka -partitions 0", 2, "-partitions = 0, want in [1, 4096]"},
	{"kafka -partitions 5000", 2, "-partitions = 5000, want in [1, 4096]"},
	{"kafka -partials-partitions 0", 2, "-partials-partitions = 0, want in [1, 4096]"},
	{"kafka -window 0s", 2, "-window = 0s, want > 0"},
	{"kafka -timeout 0s", 2, "-timeout = 0s, want > 0"},
	{"kafka -topic-prefix x", 2, "-topic-prefix is not used without -brokers"},
	{"kafka -brokers a:1,,b:2", 2, `-brokers = "a:1,,b:2", want host:port,... with no empty address`},
	{"kafka -tls", 2, `-tls is not used without -brokers (the in-process cluster is plaintext)`},
	{"kafka -brokers a:1 -sasl-user u", 2, `-sasl-user is not used without -sasl-mechanism`},
	{"kafka -brokers a:1 -sasl-mechanism GSSAPI -sasl-user u", 2, `-sasl-mechanism = "GSSAPI", want one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`},
	{"kafka -brokers a:1 -sasl-mechanism PLAIN", 2, `-sasl-user = "", want a user name with -sasl-mechanism PLAIN`},
	{"kafka -partitioner nope", 2, `-partitioner = "nope", want one of`},
	{"kafka -semantics once", 2, `-semantics = "once", want one of at-least-once, exactly-once`},
	{"kafka -semantics exactly-once,exactly-once", 2, "-semantics = exactly-once, want each value at most once"},
	{"kafka -file FILE -seed 3", 2, "-seed is not used here with a words file (nothing is sampled)"},
	{"kafka -rate -1", 2, "-rate = -1, want 0 (as fast as the producer sends) or in [1e-09, 1e+09] records/s"},
	{"kafka -rate 2e9", 2, "-rate = 2e+09, want 0 (as fast as the producer sends) or in [1e-09, 1e+09] records/s"},
	{"kafka -work spin:1us", 2, "-work = spin:1us, want none or model:DURATION"},
	{"kafka -work model:0s", 2, "-work = model:0s, want model:DURATION with DURATION in (0, 1h0m0s]"},
	{"kafka -work sleep:1ms", 2, `-work = "sleep:1ms", want none or model:DURATION`},
	{"kafka -policy threshold", 2, `-policy = "threshold", want one of ds2-skew, ds2`},
	{"kafka -policy ds2,ds2-skew", 2, `-policy = "ds2,ds2-skew", want one of ds2-skew, ds2`},
	{"kafka -target-rate -5", 2, "-target-rate = -5, want 0 (the offered rate) or in [1e-09, 1e+09] records/s"},
	{"kafka -target-rate 2e9", 2, "-target-rate = 2e+09, want 0 (the offered rate) or in [1e-09, 1e+09] records/s"},
	{"kafka -input-topic t -rate 100", 2, "-rate is not used with -input-topic (a run over an existing topic recommends nothing)"},
	{"scale -rate-schedule 5k", 2, "-rate-schedule = 5k, want RATE@TIME"},
	{"scale -rate-schedule 5k@1s", 2, "-rate-schedule = 5000@1s, want steps from 0s (RATE@TIME,...)"},
	{"scale -policy pid", 2, `-policy = "pid", want one of ds2, ds2-skew, threshold`},
	{"scale -interval 1ms", 2, "-interval = 1ms, want >= 100ms"},
	{"scale -tuples 10", 2, "-tuples is not used (the schedule and -duration set the records)"},
	{"scale -duration 100000h", 2, "-duration = 100000h0m0s, want at most 268435456 records offered by -rate-schedule in it, not 36000001000000 (they are held: 16 bytes each)"},
	{"frobnicate", 2, `unknown subcommand "frobnicate", want one of detector, forgetting, kafka, nexmark, partition, run, scale, sketch`},
	{"scale -map-cost=-1s", 2, "-map-cost = -1s, want in [0, 1h0m0s]"},
	{"scale -count-cost=2h", 2, "-count-cost = 2h0m0s, want in [0, 1h0m0s]"},
	{"scale -sink-cost=-1ns", 2, "-sink-cost = -1ns, want in [0, 1h0m0s]"},
	{"sketch -delta=5e-324", 2, "-delta = 5e-324, want in [1.6038108905486265e-28, 1) (Count-Min's depth ⌈ln 1/δ⌉ is at most 64 rows)"},
	{"sketch -sketches countmin-cu -delta=1e-28", 2, "-delta = 1e-28, want in [1.6038108905486265e-28, 1)"},
	{"sketch -sketches countmin -epsilon=1e-6 -delta=1e-20", 2,
		"-epsilon = 1e-06, want at least 1.2961777822776056e-06 with -delta = 1e-20 (Count-Min's width e/ε, rounded up to a power of two, times its depth ⌈ln 1/δ⌉ = 47 must fit in 2^27 counters)"},
	{"sketch -sketches lossy -delta=5e-324", 2, "-delta is not used by -sketches lossy (only by countmin, countmin-cu)"},
	{"nexmark -query q23", 2, "-query = q23: q23 is not supported: it joins persons, auctions and bids"},
	{"nexmark -query q0,q99", 2, `-query = q0,q99: "q99" is not a query, want all or a list of q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11, q12, q13, q14, q15, q16, q17, q18, q19, q20, q21, q22`},
	{"nexmark -events 0", 2, "-events = 0, want >= 1"},
	{"nexmark -sources 0", 2, "-sources = 0, want >= 1"},
	{"nexmark -workers 0", 2, "-workers = 0, want >= 1"},
	{"nexmark -partitioner random", 2, `-partitioner = "random", want one of auto, dchoices, hash, pkg, shuffle, wchoices`},
	{"nexmark -checkpoint-interval -1s", 2, "-checkpoint-interval = -1s, want >= 0 (0: no checkpoints)"},
	{"nexmark -state-backend rocksdb", 2, `invalid value "rocksdb" for flag -state-backend: want one of heap, pebble`},
	{"nexmark -state-backend pebble", 2, `-state-dir = "", want a directory with -state-backend pebble`},
	{"nexmark -state-dir d", 2, `-state-dir = d, want "" with -state-backend heap`},
	{"nexmark -state-backend pebble -state-dir d", 2, "-state-backend = pebble, want heap for q0, which keeps no keyed state (leave it out of -query)"},
	{"nexmark -query q5,q11 -state-backend pebble -state-dir d", 2, "-state-backend = pebble, want heap for q11, whose session windows the Pebble backend does not hold (leave it out of -query)"},
	{"nexmark -query q0,q1 -workers 4", 2, "-workers is not used by the stateless queries q0,q1 (they run on the -sources workers)"},
	{"nexmark -query q2 -partitioner hash", 2, "-partitioner is not used by the stateless queries q2 (they run on the -sources workers)"},
	{"nexmark -plot x.gif", 2, "-plot = x.gif, want a file name ending in .svg or .png"},
}

// wordsFile is a small words file the FILE of badInputs stands for.
func wordsFile(t *testing.T) string {
	t.Helper()
	return writeFile(t, "words.txt", "the cat and the hat\n")
}

func TestBadInput(t *testing.T) {
	runBadInputs(t, badInputs)
}

// runBadInputs runs each refused command line and checks its exit status
// and message.
func runBadInputs(t *testing.T, cases []badInput) {
	t.Helper()
	file := wordsFile(t)
	for _, tc := range cases {
		t.Run(tc.args, func(t *testing.T) {
			args := strings.Fields(strings.ReplaceAll(tc.args, "FILE", file))
			code, out, errs := cli(t, args...)
			require.Equal(t, tc.code, code, errs)
			require.Empty(t, out, "errors never go to stdout")
			require.Contains(t, errs, tc.want)
			require.NotContains(t, errs, "--", "flags are named as -h shows them")
			if first, _, _ := strings.Cut(errs, "\n"); !strings.HasPrefix(tc.args, "frobnicate") && !strings.Contains(tc.want, "flag") {
				require.Equal(t, 1, strings.Count(errs, tc.want), "the error is printed once")
				require.True(t, strings.HasPrefix(first, "streambench "+args[0]+": "), first)
			}
		})
	}
}

func TestBadFileContents(t *testing.T) {
	// A freq file of binary garbage fails with the flag and the path in
	// front, the datasets error once (with a short excerpt), and exit
	// status 1.
	garbage := make([]byte, 20000)
	for i := range garbage {
		garbage[i] = byte(i*131 + 7)
	}
	p := filepath.Join(t.TempDir(), "garbage.bin")
	require.NoError(t, os.WriteFile(p, garbage, 0o644))
	code, out, errs := cli(t, "sketch", "-file", p, "-format", "freq")
	require.Equal(t, exitError, code)
	require.Empty(t, out)
	require.True(t, strings.HasPrefix(errs, "streambench sketch: bench: -file "+p+": "), errs[:min(len(errs), 200)])
	require.Equal(t, 1, strings.Count(errs, "\n"), "one line")
	require.Equal(t, 1, strings.Count(errs, "malformed"), "the error once")
	require.Less(t, len(errs), 600, "a short excerpt of the bad line, not the line")
	require.NotContains(t, errs, "--file")
}

// docRow is one row of the "Bad input" table: | `command` | status | `message` |.
var docRow = regexp.MustCompile("^\\| `streambench ([^`]*)` \\| (\\d+) \\| `(.*)` \\|$")

func TestBadInputDocumented(t *testing.T) {
	// docs/streambench.md's "Bad input" table is this test's table: same
	// command lines, statuses and messages, in the same order.
	b, err := os.ReadFile("../../docs/streambench.md")
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(b), "\n## Bad input\n")
	require.True(t, ok, `docs/streambench.md has a "## Bad input" section`)
	table, _, _ = strings.Cut(table, "\n## ")
	var got []badInput
	for _, line := range strings.Split(table, "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			code, _ := strconv.Atoi(m[2])
			got = append(got, badInput{args: m[1], code: code, want: strings.ReplaceAll(m[3], `\|`, "|")})
		}
	}
	require.Equal(t, badInputs, got)
}
