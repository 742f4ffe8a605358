package datasets

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// testdata/checksums.golden pins every generator's output: the XXH64 of the
// first n records (Key then Time, little-endian) for fixed parameters and
// seeds. It is rewritten only by `go test ./datasets -run Golden -update`
// after an intended change of a generator; never edit it to make a test
// pass. The figures assume IEEE-754 float64 arithmetic as Go's math package
// computes it on amd64.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const goldenFile = "checksums.golden"

// goldenStreams builds each generator with fixed parameters, n records long.
func goldenStreams(t *testing.T, n int64) map[string]stream.Stream {
	t.Helper()
	ok := func(s stream.Stream, err error) stream.Stream {
		t.Helper()
		require.NoError(t, err)
		return s
	}
	ft, err := LoadFreqTable(dataFile(t, "count_1w.txt"))
	require.NoError(t, err)
	return map[string]stream.Stream{
		"zipf-k1e6-s1.2":    ok(NewZipf(1_000_000, 1.2, n, 1)),
		"zipf-k1e4-s0.5":    ok(NewZipf(10_000, 0.5, n, 2)),
		"zipf-k100-s0":      ok(NewZipf(100, 0, n, 3)),
		"exact-k1e4-s1":     ok(NewExactZipf(10_000, 1, n, 4)),
		"grid-k1e4-s1":      ok(NewGridZipf(10_000, 1, n, 4)),
		"drift-rotate":      ok(NewDrift(DriftConfig{K: 10_000, S: 1.1, N: n, Period: n / 4, Shift: 2, Seed: 5})),
		"drift-redraw":      ok(NewDrift(DriftConfig{K: 10_000, S: 1.1, N: n, Period: n / 4, Mode: DriftRedraw, Seed: 6})),
		"uniform-k1e6":      ok(NewUniform(1_000_000, n, 7)),
		"constant":          ok(NewConstant(0xfeedface, n)),
		"eventtime-zipf":    ok(NewEventTime(ok(NewZipf(1000, 1, n, 8)), EventTimeConfig{Start: 1_700_000_000e9, Rate: 1e5, MaxDelay: 2e6, Delay: DelayExponential, MeanDelay: 5e5, LateFraction: 0.01, MaxLateness: 1e6, Seed: 8})),
		"freqtable-count1w": ok(ft.Sample(n, 9)),
	}
}

func checksum(s stream.Stream) string {
	d := xxhash.New()
	buf := make([]stream.Record, 4096)
	var b [16]byte
	for {
		n := s.Fill(buf)
		for _, r := range buf[:n] {
			binary.LittleEndian.PutUint64(b[:8], r.Key)
			binary.LittleEndian.PutUint64(b[8:], uint64(r.Time))
			_, _ = d.Write(b[:])
		}
		if n < len(buf) {
			return fmt.Sprintf("%016x", d.Sum64())
		}
	}
}

func TestGoldenChecksums(t *testing.T) {
	path := filepath.Join("testdata", goldenFile)
	sizes := []int64{100_000, 1_000_000}
	if testing.Short() && !*update {
		sizes = sizes[:1]
	}
	got := map[string]string{}
	for _, n := range sizes {
		for name, s := range goldenStreams(t, n) {
			got[fmt.Sprintf("%s n=%d", name, n)] = checksum(s)
		}
	}
	if *update {
		var lines []string
		for k, v := range got {
			lines = append(lines, k+" "+v)
		}
		slices.Sort(lines)
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		return
	}
	f, err := os.Open(path)
	require.NoError(t, err, "missing golden file; run go test ./datasets -run Golden -update once")
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		i := strings.LastIndexByte(sc.Text(), ' ')
		want[sc.Text()[:i]] = sc.Text()[i+1:]
	}
	require.NoError(t, sc.Err())
	for k, v := range got {
		require.Equal(t, want[k], v, "stream %s changed; if intended, run with -update and say why in the commit", k)
	}
}
