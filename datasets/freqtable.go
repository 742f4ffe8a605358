package datasets

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// FreqTable is a frequency table read from a file of `key<TAB>count` lines
// (Norvig's count_1w.txt: 100,000 rows). It is a distribution, not a
// stream: Sample draws a stream of any length from it. Read-only once
// loaded and safe for concurrent use.
type FreqTable struct {
	path   string
	names  []string
	keys   []uint64
	counts []uint64
	total  float64
	index  map[uint64]int32
}

// LoadFreqTable reads a frequency table, gzip-compressed or plain, line by
// line. Every line must be a key, one tab and a decimal count (a trailing
// \r is ignored); a malformed line, a line longer than MaxTokenSize bytes,
// a NUL byte, a repeated key or a table whose counts are all zero is an
// error naming the file and the line and quoting at most a short excerpt of
// it. The table is held in memory (its keys, names and counts), the file
// never is.
func LoadFreqTable(path string) (*FreqTable, error) {
	d, err := openData(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	t := &FreqTable{path: path, index: make(map[uint64]int32)}
	for {
		row, ok, err := d.readLine()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		row = bytes.TrimSuffix(row, []byte{'\r'})
		tab := bytes.IndexByte(row, '\t')
		if tab <= 0 {
			return nil, d.errorf("want key<TAB>count, got %s", excerpt(row))
		}
		count, err := strconv.ParseUint(string(row[tab+1:]), 10, 64)
		if err != nil {
			return nil, d.errorf("count %s is not a non-negative integer", excerpt(row[tab+1:]))
		}
		key := sketch.Hash(row[:tab])
		if prev, dup := t.index[key]; dup {
			return nil, d.errorf("key %s repeats line %d (or shares its 64-bit hash)", excerpt(row[:tab]), prev+1)
		}
		if len(t.keys) == 1<<31-1 {
			return nil, d.errorf("more than 2^31-1 rows")
		}
		t.index[key] = int32(len(t.keys))
		t.names = append(t.names, string(row[:tab]))
		t.keys = append(t.keys, key)
		t.counts = append(t.counts, count)
		t.total += float64(count)
	}
	if len(t.keys) == 0 {
		return nil, fmt.Errorf("%w: %s holds no rows", ErrEmpty, path)
	}
	if t.total == 0 {
		return nil, fmt.Errorf("%w: %s: every count is 0", ErrEmpty, path)
	}
	return t, nil
}

// Rows returns the number of rows (distinct keys).
func (t *FreqTable) Rows() int { return len(t.keys) }

// Row returns row i (0-based, file order): its original key, its key hash
// and its count.
func (t *FreqTable) Row(i int) (name string, key, count uint64) {
	return t.names[i], t.keys[i], t.counts[i]
}

// Prob returns the probability of a key hash under the table (count/total),
// 0 for a key not in the table.
func (t *FreqTable) Prob(key uint64) float64 {
	i, ok := t.index[key]
	if !ok {
		return 0
	}
	return float64(t.counts[i]) / t.total
}

// KeyName implements stream.Namer.
func (t *FreqTable) KeyName(key uint64) (string, bool) {
	i, ok := t.index[key]
	if !ok {
		return "", false
	}
	return t.names[i], true
}

// Sample returns a stream of n keys drawn independently from the table,
// key i with probability count_i/total, by Vose's alias method: O(rows) to
// build, O(1) per key.
func (t *FreqTable) Sample(n int64, seed uint64) (*TableStream, error) {
	if err := checkLength(n); err != nil {
		return nil, err
	}
	return &TableStream{t: t, alias: newAlias(t.counts, t.total), src: newPCG(seed), seed: seed, n: n}, nil
}

// TableStream is a stream sampled from a FreqTable. It implements stream.Namer.
type TableStream struct {
	t     *FreqTable
	alias aliasTable
	src   rand.PCG
	seed  uint64
	n     int64
	pos   int64
}

// Fill implements stream.Stream. Records carry no event time.
func (s *TableStream) Fill(dst []stream.Record) int {
	m := int64(len(dst))
	if left := s.n - s.pos; left < m {
		m = left
	}
	dst = dst[:m]
	for i := range dst {
		dst[i] = stream.Record{Key: s.t.keys[s.alias.sample(&s.src)]}
	}
	s.pos += m
	return int(m)
}

// KeyName implements stream.Namer.
func (s *TableStream) KeyName(key uint64) (string, bool) { return s.t.KeyName(key) }

// Len returns the number of records the stream yields in all.
func (s *TableStream) Len() int64 { return s.n }

// Reset rewinds the stream to its first record.
func (s *TableStream) Reset() {
	s.src = newPCG(s.seed)
	s.pos = 0
}

// aliasTable is Vose's alias table over the rows of positive weight:
// column i yields row[i] with probability prob[i] and otherwise
// row[alias[i]]. Rows of weight 0 have no column, so rounding can never
// make them drawable.
type aliasTable struct {
	prob  []float64
	alias []int32
	row   []int32
}

func newAlias(weights []uint64, total float64) aliasTable {
	var a aliasTable
	for i, w := range weights {
		if w > 0 {
			a.row = append(a.row, int32(i))
		}
	}
	n := len(a.row)
	a.prob, a.alias = make([]float64, n), make([]int32, n)
	scaled := make([]float64, n)
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for i, r := range a.row {
		scaled[i] = float64(weights[r]) / total * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l := small[len(small)-1]
		small = small[:len(small)-1]
		g := large[len(large)-1]
		a.prob[l], a.alias[l] = scaled[l], g
		scaled[g] = (scaled[g] + scaled[l]) - 1
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	// What is left is 1 up to rounding error.
	for _, g := range large {
		a.prob[g], a.alias[g] = 1, g
	}
	for _, l := range small {
		a.prob[l], a.alias[l] = 1, l
	}
	return a
}

func (a *aliasTable) sample(src *rand.PCG) int32 {
	i := int32(hashx.Reduce(src.Uint64(), len(a.prob)))
	if float64From(src.Uint64()) < a.prob[i] {
		return a.row[i]
	}
	return a.row[a.alias[i]]
}
