package bench

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/stream"
)

// WorkloadKinds names the synthetic workloads, FileFormats the formats of a
// user's data file.
var (
	WorkloadKinds = []string{"zipf", "exact-zipf", "grid-zipf", "uniform", "drift"}
	FileFormats   = []string{"words", "items", "freq"}
)

// MaxGridKeys bounds the keys of a grid-zipf stream, whose generator holds
// a probability per key.
const MaxGridKeys = 1 << 24

// WorkloadSpec describes a workload as the command line gives it: a
// synthetic kind with its parameters, or a file in one of FileFormats.
type WorkloadSpec struct {
	Kind  string
	ZipfS float64
	Keys  uint64
	Seed  uint64
	// File, when set, replaces the synthetic kind: words (text, one key per
	// word), items (whitespace-separated ids) or freq (key<TAB>count,
	// sampled into a stream of the requested length).
	File   string
	Format string
	// DriftEvery is, for drift, how many records pass between moves of the
	// hot set (default a tenth of the run, at most 100,000). At each move a
	// new permutation maps ranks to keys: the hot set jumps anywhere.
	DriftEvery int64
}

// Build validates the spec, loads a file if one is named, and returns the
// workload.
func (s WorkloadSpec) Build() (Workload, error) {
	if s.File != "" {
		w, err := s.buildFile()
		w.File = s.File
		return w, err
	}
	maxKeys := uint64(datasets.MaxZipfKeys)
	switch s.Kind {
	case "exact-zipf":
		maxKeys = 1<<32 - 1
	case "grid-zipf":
		maxKeys = MaxGridKeys
	}
	switch {
	case math.IsNaN(s.ZipfS) || math.IsInf(s.ZipfS, 0) || s.ZipfS < 0:
		return Workload{}, invalidParam("-zipf-s", s.ZipfS, "a finite exponent >= 0")
	case s.Keys == 0 || s.Keys > maxKeys:
		return Workload{}, invalidParam("-keys", s.Keys, fmt.Sprintf("in [1, %d] for %s", maxKeys, s.Kind))
	case s.DriftEvery < 0:
		return Workload{}, invalidParam("-drift-every", s.DriftEvery, ">= 0 (0: a tenth of the run)")
	}
	w := Workload{Name: s.Kind, ZipfS: s.ZipfS, Keys: s.Keys}
	switch s.Kind {
	case "zipf":
		w.Open = func(n int64) (stream.Stream, error) {
			return wrapData(datasets.NewZipf(s.Keys, s.ZipfS, n, s.Seed))
		}
	case "uniform":
		w.ZipfS = 0
		w.Open = func(n int64) (stream.Stream, error) { return wrapData(datasets.NewUniform(s.Keys, n, s.Seed)) }
	case "exact-zipf":
		w.Whole = true
		w.Open = func(n int64) (stream.Stream, error) {
			if n > datasets.MaxExactRecords {
				return nil, invalidParam("-tuples", n, fmt.Sprintf("at most %d for exact-zipf", datasets.MaxExactRecords))
			}
			return wrapData(datasets.NewExactZipf(s.Keys, s.ZipfS, n, s.Seed))
		}
	case "grid-zipf":
		// The partitioning grids' stream (internal/partlab), held whole.
		k := int(s.Keys)
		w.Open = func(n int64) (stream.Stream, error) {
			if n > MaxHeldTuples {
				return nil, invalidParam("-tuples", n, fmt.Sprintf("at most %d for grid-zipf (the stream is held: 8 bytes a record)", MaxHeldTuples))
			}
			keys, _ := partlab.ExactZipf(int(n), k, s.ZipfS, s.Seed)
			return stream.FromKeys(keys), nil
		}
		w.Probs = func() map[uint64]float64 { return partlab.ExactZipfProbs(k, s.ZipfS) }
	case "drift":
		w.Open = func(n int64) (stream.Stream, error) {
			every := s.DriftEvery
			if every <= 0 {
				every = max(1, min(n/10, 100_000))
			}
			return wrapData(datasets.NewDrift(datasets.DriftConfig{
				K: s.Keys, S: s.ZipfS, N: n, Period: every, Mode: datasets.DriftRedraw, Seed: s.Seed,
			}))
		}
	default:
		return Workload{}, invalidChoice("-workload", s.Kind, WorkloadKinds)
	}
	return w, nil
}

// wrapData turns a datasets parameter error into this package's, so that
// the command line reports it as a bad value.
func wrapData[S stream.Stream](st S, err error) (stream.Stream, error) {
	if err != nil {
		if errors.Is(err, datasets.ErrInvalidParameter) {
			return nil, fmt.Errorf("%w: -workload: %v", ErrInvalidParameter, err)
		}
		return nil, err
	}
	return st, nil
}

// buildFile builds the workload of a data file. Words and items stream
// from the file: each Open reads it afresh, no further than the records
// asked for, and the file is read once at build time only as far as its
// first key, so that a file that cannot be read fails here. A frequency
// table is loaded whole (its rows are the distribution sampled from).
func (s WorkloadSpec) buildFile() (Workload, error) {
	fileErr := func(err error) error { return fmt.Errorf("bench: -file %s: %w", s.File, err) }
	w := Workload{Name: filepath.Base(s.File)}
	switch s.Format {
	case "words", "items":
		open := datasets.OpenWords
		if s.Format == "items" {
			open = datasets.OpenItems
		}
		probe, err := open(s.File)
		if err != nil {
			return Workload{}, fileErr(err)
		}
		probe.Fill(make([]stream.Record, 1))
		err = probe.Err()
		probe.Close()
		if err != nil {
			return Workload{}, fileErr(err)
		}
		names := &fileNames{}
		w.Namer = names
		w.Open = func(n int64) (stream.Stream, error) {
			fs, err := open(s.File)
			if err != nil {
				return nil, fileErr(err)
			}
			names.add(fs)
			return &fileStream{fs: fs, left: n, fileErr: fileErr}, nil
		}
	case "freq":
		t, err := datasets.LoadFreqTable(s.File)
		if err != nil {
			return Workload{}, fileErr(err)
		}
		w.Keys = uint64(t.Rows())
		w.Namer = t
		w.Open = func(n int64) (stream.Stream, error) { return t.Sample(n, s.Seed) }
	default:
		return Workload{}, invalidChoice("format", s.Format, FileFormats)
	}
	return w, nil
}

// fileStream is the stream of a data file cut to its first left records;
// it closes the file once they are read. Err reports the error that ended
// the file's stream early (stream.Err finds it).
type fileStream struct {
	fs      *datasets.FileStream
	left    int64
	fileErr func(error) error
}

// Fill implements stream.Stream.
func (f *fileStream) Fill(dst []stream.Record) int {
	if int64(len(dst)) > f.left {
		dst = dst[:f.left]
	}
	n := f.fs.Fill(dst)
	if f.left -= int64(n); f.left == 0 {
		f.fs.Close()
	}
	return n
}

// Err returns the format or I/O error that ended the file early, nil at a
// clean end or once the records asked for are read.
func (f *fileStream) Err() error {
	if err := f.fs.Err(); err != nil {
		return f.fileErr(err)
	}
	return nil
}

// KeyName implements stream.Namer.
func (f *fileStream) KeyName(key uint64) (string, bool) { return f.fs.KeyName(key) }

// fileNames names the keys of every stream a file workload has opened.
// Each stream reads the same file from its start, so the one that has read
// the most distinct keys knows the names of all the others': fileNames
// keeps that one and the newest, whatever the number of opens.
type fileNames struct{ most, latest *datasets.FileStream }

func (f *fileNames) add(fs *datasets.FileStream) {
	if f.latest != nil && (f.most == nil || f.latest.Distinct() > f.most.Distinct()) {
		f.most = f.latest
	}
	f.latest = fs
}

// KeyName implements stream.Namer.
func (f *fileNames) KeyName(key uint64) (string, bool) {
	for _, fs := range []*datasets.FileStream{f.latest, f.most} {
		if fs == nil {
			continue
		}
		if name, ok := fs.KeyName(key); ok {
			return name, true
		}
	}
	return "", false
}
