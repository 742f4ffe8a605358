package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/stream"
)

// workloadFlags are the flags that describe a stream, registered once for
// every subcommand: the same names, types and meanings everywhere. Only the
// defaults of -tuples and -zipf-s differ, each for a reason its -h states.
type workloadFlags struct {
	kind, format choice
	file         string
	keys         uint64
	zipfS        string
	tuples       int64
	driftEvery   int64
	seed         uint64
	set          map[string]bool // the flags given on the command line
}

// workloadDefaults are what a subcommand's -h says about -zipf-s and
// -tuples, and their defaults.
type workloadDefaults struct {
	zipfS, zipfHelp string
	tuples          int64
	tuplesHelp      string
	// seedHelp says what the seed seeds besides the synthetic stream.
	seedHelp string
}

// defaultZipfS is the exponent of the default workload: the hottest of
// 10^6 keys carries 38% of a Zipf(1.5) stream.
const (
	defaultZipfS = "1.5"
	defaultKeys  = 1_000_000
)

func (w *workloadFlags) register(fs *flag.FlagSet, d workloadDefaults) {
	w.kind = choice{value: "zipf", choices: bench.WorkloadKinds}
	w.format = choice{value: "words", choices: bench.FileFormats}
	fs.Var(&w.kind, "workload", "synthetic stream `KIND`: "+strings.Join(bench.WorkloadKinds, ", ")+" (uniform = Zipf s=0; exact-zipf: each key exactly round(p_i·tuples) times, shuffled, so the stream holds the sum of those counts, within K/2 of -tuples (partition, detector and kafka read it whole; run and sketch stop at -tuples); grid-zipf: the stream of docs/results/partitioning.md's grids, floor(p_i·tuples) times each and one more for the hottest until it holds -tuples, shuffled; drift: the hot set moves)")
	fs.StringVar(&w.file, "file", "", "read the stream from `PATH` instead (see -format); -workload, -keys, -zipf-s and -drift-every do not apply")
	fs.Var(&w.format, "format", "`FORMAT` of -file: words (text, one key per word), items (whitespace-separated ids), freq (key<TAB>count, sampled with -seed)")
	fs.Uint64Var(&w.keys, "keys", defaultKeys, "number of distinct keys of a synthetic stream")
	fs.StringVar(&w.zipfS, "zipf-s", d.zipfS, d.zipfHelp)
	fs.Int64Var(&w.tuples, "tuples", d.tuples, d.tuplesHelp)
	fs.Int64Var(&w.driftEvery, "drift-every", 0, "drift: records between moves of the hot set (0: a tenth of the run, at most 100000)")
	fs.Uint64Var(&w.seed, "seed", 1, "`SEED` of the synthetic stream (or of a freq file's sampling)"+d.seedHelp+"; echoed in the output")
}

// check refuses the flags given that the workload does not use; seedUsed
// tells whether the subcommand itself uses the seed (for partitioners).
func (w *workloadFlags) check(fs *flag.FlagSet, seedUsed bool) error {
	w.set = explicit(fs)
	if w.file != "" {
		for _, f := range []string{"workload", "keys", "zipf-s", "drift-every"} {
			if w.set[f] {
				return unused("-"+f, "with -file (the file is the stream)")
			}
		}
		if w.set["seed"] && !seedUsed && w.format.value != "freq" {
			return unused("-seed", "here with a "+w.format.value+" file (nothing is sampled)")
		}
		return nil
	}
	switch {
	case w.set["format"]:
		return unused("-format", "without -file")
	case w.set["drift-every"] && w.kind.value != "drift":
		return unused("-drift-every", "with -workload "+w.kind.value)
	case w.set["zipf-s"] && w.kind.value == "uniform":
		return unused("-zipf-s", "with -workload uniform (s = 0)")
	}
	return nil
}

// seedUsed tells whether the workload uses -seed.
func (w *workloadFlags) seedUsed() bool { return w.file == "" || w.format.value == "freq" }

// exponents parses -zipf-s: a list for partition's sweep, else one value.
func (w *workloadFlags) exponents(list bool) ([]float64, error) {
	if w.file != "" {
		return nil, nil
	}
	s, err := bench.ParseFloats("-zipf-s", w.zipfS)
	if err != nil {
		return nil, err
	}
	if !list && len(s) != 1 {
		return nil, fmt.Errorf("%w: -zipf-s = %s, want one exponent (only partition sweeps a list)", bench.ErrInvalidParameter, w.zipfS)
	}
	for _, x := range s {
		if x < 0 {
			return nil, fmt.Errorf("%w: -zipf-s = %s, want exponents >= 0", bench.ErrInvalidParameter, w.zipfS)
		}
	}
	return s, nil
}

func (w *workloadFlags) spec(s float64) bench.WorkloadSpec {
	return bench.WorkloadSpec{Kind: w.kind.value, ZipfS: s, Keys: w.keys, Seed: w.seed, File: w.file, Format: w.format.value, DriftEvery: w.driftEvery}
}

// build parses -zipf-s as one value and builds the workload.
func (w *workloadFlags) build() (bench.Workload, error) {
	s, err := w.exponents(false)
	if err != nil {
		return bench.Workload{}, err
	}
	if len(s) == 0 {
		s = []float64{0} // a file: no exponent
	}
	return w.spec(s[0]).Build()
}

// settings are the header's settings for the workload: what ran, so a file
// shows neither an exponent nor a key count it did not use.
func (w *workloadFlags) settings() [][2]string {
	if w.file != "" {
		return [][2]string{{"workload", filepath.Base(w.file)}}
	}
	out := [][2]string{{"workload", w.kind.value}}
	if w.kind.value != "uniform" {
		out = append(out, [2]string{"zipf_s", w.zipfS})
	}
	out = append(out, [2]string{"keys", fmt.Sprint(w.keys)})
	if w.kind.value == "drift" {
		every := "auto"
		if w.driftEvery > 0 {
			every = fmt.Sprint(w.driftEvery)
		}
		out = append(out, [2]string{"drift_every", every})
	}
	return out
}

// seedSetting is the header's seed, where something used it.
func (w *workloadFlags) seedSetting(used bool) [][2]string {
	if !used && !w.seedUsed() {
		return nil
	}
	return [][2]string{{"seed", fmt.Sprint(w.seed)}}
}

// wholeFile makes -tuples fit a -file: without -tuples (or with 0) the
// run reads the file whole (its records are counted in a first pass), and with a
// -tuples below the file's length a line on stderr says how much of the
// file the run reads, so that a file is never cut silently.
func (w *workloadFlags) wholeFile(ctx context.Context, cmd string, wk bench.Workload, stderr io.Writer) error {
	if w.file == "" {
		return nil
	}
	n, err := countRecords(ctx, wk)
	if err != nil {
		return err
	}
	switch {
	case !w.set["tuples"] || w.tuples == 0:
		w.tuples = n
	case w.tuples > 0 && w.tuples < n:
		fmt.Fprintf(stderr, "streambench %s: -tuples %d reads %d of the %d records of %s\n", cmd, w.tuples, w.tuples, n, w.file)
	}
	return nil
}

// countRecords reads a workload's stream to its end and counts its
// records.
func countRecords(ctx context.Context, wk bench.Workload) (int64, error) {
	s, err := wk.Open(math.MaxInt64 / 2)
	if err != nil {
		return 0, err
	}
	buf := make([]stream.Record, 4096)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m := s.Fill(buf)
		if m == 0 {
			break
		}
		n += int64(m)
	}
	return n, stream.Err(s)
}
