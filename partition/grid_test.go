package partition

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/stream"
)

// The grid sweep of docs/partitioning.md. It runs only when asked:
//
//	go test ./partition -run TestGrid -grid -grid.m 1000000 -grid.out ../docs/partitioning-grid.md -timeout 0
var (
	gridRun   = flag.Bool("grid", false, "run the partitioning grid sweep (long)")
	gridM     = flag.Int("grid.m", 10_000_000, "tuples per grid stream")
	gridK     = flag.Int("grid.k", 1_000_000, "distinct keys per grid stream")
	gridS     = flag.String("grid.s", "", "comma-separated Zipf exponents (default 0.1..2.0 step 0.1)")
	gridN     = flag.String("grid.n", "5,10,50,100", "comma-separated worker counts")
	gridSrc   = flag.String("grid.sources", "1,5,20", "comma-separated source counts")
	gridKinds = flag.String("grid.kinds", "hash,shuffle,pkg,dchoices,dchoices-paper,wchoices,rr-head", "partitioners")
	gridOut   = flag.String("grid.out", "", "write the markdown table there")
	gridPlot  = flag.String("grid.plot", "", "write the lambda-vs-s plot there (.png or .svg)")
	gridReal  = flag.Bool("grid.real", true, "also run pg135 and retail")
	gridZipf  = flag.Bool("grid.zipf", true, "run the exact-frequency Zipf streams")
	gridDet   = flag.String("grid.detector", "oracle", "head detector: oracle (true probabilities), exact (windowed exact counts), countmin, spacesaving, filtered or lossy")
	gridWin   = flag.Bool("grid.winpersource", false, "spacesaving or filtered: windows divided by S, as WithSources(S) does for the default detector")
)

type gridRow struct {
	stream string
	s, p1  float64
	n, src int
	kind   string
	res    *Result
}

func ints(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		_, err := fmt.Sscan(f, &v)
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// dataFile returns the path of one of the repository's data sets; it skips
// only where data/ is absent by design (the module cache).
func dataFile(t *testing.T, name string) string {
	t.Helper()
	path, err := datasets.DataFile(name)
	if errors.Is(err, datasets.ErrNotShipped) {
		t.Skip(err)
	}
	require.NoError(t, err)
	return path
}

// pg135Keys loads Les Misérables as words (datasets.LoadWords).
func pg135Keys(t *testing.T) []uint64 {
	t.Helper()
	c, err := datasets.LoadWords(dataFile(t, "pg135-les-miserables.txt"))
	require.NoError(t, err)
	return recordKeys(c.Records())
}

// retailKeys loads the item ids of retail.dat in file order
// (datasets.LoadItems).
func retailKeys(t *testing.T) []uint64 {
	t.Helper()
	c, err := datasets.LoadItems(dataFile(t, "retail.dat"))
	require.NoError(t, err)
	return recordKeys(c.Records())
}

func recordKeys(recs []stream.Record) []uint64 {
	keys := make([]uint64, len(recs))
	for i, r := range recs {
		keys[i] = r.Key
	}
	return keys
}

func empiricalProbs(keys []uint64) (map[uint64]float64, float64) {
	c := map[uint64]float64{}
	for _, k := range keys {
		c[k]++
	}
	var p1 float64
	for k, v := range c {
		c[k] = v / float64(len(keys))
		p1 = max(p1, c[k])
	}
	return c, p1
}

func TestRealStreamsTokenise(t *testing.T) {
	pg := pg135Keys(t)
	require.Len(t, pg, 579_482)
	probs, p1 := empiricalProbs(pg)
	require.Len(t, probs, 23_029)
	require.InDelta(t, 0.0709, p1, 5e-4)
	rt := retailKeys(t)
	require.Len(t, rt, 908_576)
	probs, p1 = empiricalProbs(rt)
	require.Len(t, probs, 16_470)
	require.InDelta(t, 0.0558, p1, 5e-4)
}

func TestGrid(t *testing.T) {
	if !*gridRun {
		t.Skip("the grid sweep runs with -grid (see docs/partitioning.md)")
	}
	ss := []float64{}
	if *gridS == "" {
		for i := 1; i <= 20; i++ {
			ss = append(ss, float64(i)/10)
		}
	} else {
		for _, f := range strings.Split(*gridS, ",") {
			var v float64
			_, err := fmt.Sscan(f, &v)
			require.NoError(t, err)
			ss = append(ss, v)
		}
	}
	ns, srcs := ints(t, *gridN), ints(t, *gridSrc)
	kinds := strings.Split(*gridKinds, ",")

	type streamDef struct {
		name  string
		s, p1 float64
		keys  []uint64
		probs map[uint64]float64
	}
	var defs []func() streamDef
	for _, s := range ss {
		if !*gridZipf {
			break
		}
		defs = append(defs, func() streamDef {
			keys, probs := exactZipf(*gridM, *gridK, s, 11)
			var p1 float64
			for _, p := range probs {
				p1 = max(p1, p)
			}
			return streamDef{fmt.Sprintf("zipf m=%d K=%d", *gridM, *gridK), s, p1, keys, probs}
		})
	}
	if *gridReal {
		defs = append(defs, func() streamDef {
			k := pg135Keys(t)
			p, p1 := empiricalProbs(k)
			return streamDef{"pg135", 0, p1, k, p}
		}, func() streamDef {
			k := retailKeys(t)
			p, p1 := empiricalProbs(k)
			return streamDef{"retail", 0, p1, k, p}
		})
	}
	// One pool over every (stream, n, S, kind); each stream is built once,
	// by the first job that needs it.
	streams := make([]streamDef, len(defs))
	onces := make([]sync.Once, len(defs))
	type job struct {
		def, n, src int
		kind        string
	}
	var rows []gridRow
	var mu sync.Mutex
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				onces[j.def].Do(func() { streams[j.def] = defs[j.def]() })
				sd := &streams[j.def]
				det := OracleDetectorFactory(sd.probs)
				switch *gridDet {
				case "exact":
					det = WindowedExactDetectorFactory
				case "countmin":
					det = CountMinDetectorFactory
				case "spacesaving":
					det = SpaceSavingDetectorFactory
				case "filtered":
					det = FilteredSpaceSavingDetectorFactory
				case "lossy":
					det = LossyCountingDetectorFactory
				}
				opts := []Option{WithDetector(det)}
				if *gridWin {
					// WithSources(S)'s windows (DefaultWindow/S, at least
					// minSourceWindow) for the chosen sketch detector.
					mk := NewSpaceSavingDetector
					if *gridDet == "filtered" {
						mk = NewFilteredSpaceSavingDetector
					}
					src := j.src
					opts = []Option{WithSources(src), WithDetector(func(_ int, theta float64) (HotKeyDetector, error) {
						if src == 1 {
							return mk(theta, DefaultWindow(theta))
						}
						return mk(theta, max(minSourceWindow, DefaultWindow(theta)/src))
					})}
				}
				f, err := NewFactory(j.kind, opts...)
				require.NoError(t, err)
				res, err := Run(Config{Stream: stream.FromKeys(sd.keys), Factory: f, Sources: j.src, Workers: j.n, Period: len(sd.keys) / 10})
				require.NoError(t, err)
				mu.Lock()
				rows = append(rows, gridRow{stream: sd.name, s: sd.s, p1: sd.p1, n: j.n, src: j.src, kind: j.kind, res: res})
				fmt.Fprintf(os.Stderr, "grid: %d rows (%s s=%.1f n=%d S=%d %s lambda=%.3g)\n", len(rows), sd.name, sd.s, j.n, j.src, j.kind, res.Imbalance)
				mu.Unlock()
			}
		})
	}
	for d := range defs {
		for _, n := range ns {
			for _, src := range srcs {
				for _, kind := range kinds {
					jobs <- job{d, n, src, kind}
				}
			}
		}
	}
	close(jobs)
	wg.Wait()
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.stream != b.stream {
			return a.stream > b.stream
		}
		if a.s != b.s {
			return a.s < b.s
		}
		if a.n != b.n {
			return a.n < b.n
		}
		if a.src != b.src {
			return a.src < b.src
		}
		return a.kind < b.kind
	})
	table := gridTable(rows, kinds)
	if *gridOut != "" {
		require.NoError(t, os.WriteFile(*gridOut, []byte(table), 0o644))
	}
	if *gridPlot != "" {
		require.NoError(t, plotGrid(rows, kinds, *gridPlot))
	}
	checkGridTargets(t, rows)
}

// gridTable writes one line per (stream, s, n, S) with lambda and
// replication for each partitioner.
func gridTable(rows []gridRow, kinds []string) string {
	var b strings.Builder
	b.WriteString("| stream | s | p1 | n | S |")
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s λ / rep |", k)
	}
	b.WriteString("\n|---|---|---|---|---|")
	for range kinds {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i := 0; i < len(rows); i += len(kinds) {
		r := rows[i]
		s := "-"
		if strings.HasPrefix(r.stream, "zipf") {
			s = fmt.Sprintf("%.1f", r.s)
		}
		fmt.Fprintf(&b, "| %s | %s | %.4f | %d | %d |", r.stream, s, r.p1, r.n, r.src)
		byKind := map[string]*Result{}
		for _, q := range rows[i : i+len(kinds)] {
			byKind[q.kind] = q.res
		}
		for _, k := range kinds {
			fmt.Fprintf(&b, " %.2g / %.3f |", byKind[k].Imbalance, byKind[k].Replication)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkGridTargets logs every cell that misses a balance or replication
// target (the checks below) and fails if any.
func checkGridTargets(t *testing.T, rows []gridRow) {
	t.Helper()
	type cell struct {
		stream string
		s      float64
		n, src int
	}
	at := map[cell]map[string]*Result{}
	for _, r := range rows {
		c := cell{r.stream, r.s, r.n, r.src}
		if at[c] == nil {
			at[c] = map[string]*Result{}
		}
		at[c][r.kind] = r.res
	}
	misses := 0
	miss := func(format string, args ...any) {
		misses++
		t.Logf("target missed: "+format, args...)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.stream, "zipf") {
			continue
		}
		lam := r.res.Imbalance
		switch r.kind {
		case "pkg":
			if r.p1 <= 1/float64(r.n) && lam > 1e-3 {
				miss("pkg s=%.1f n=%d S=%d p1=%.4f lambda=%.3g", r.s, r.n, r.src, r.p1, lam)
			}
		case "dchoices", "wchoices":
			if lam > 1e-3 {
				miss("%s s=%.1f n=%d S=%d lambda=%.3g", r.kind, r.s, r.n, r.src, lam)
			}
		}
		if r.kind == "dchoices" {
			w := at[cell{r.stream, r.s, r.n, r.src}]["wchoices"]
			if w == nil {
				continue
			}
			if r.n >= 50 && r.p1 >= 1/(5*float64(r.n)) && r.res.Replication >= w.Replication {
				miss("dchoices replication %.3f >= wchoices %.3f at s=%.1f n=%d S=%d", r.res.Replication, w.Replication, r.s, r.n, r.src)
			}
			if r.res.Replication > w.Replication+0.05 {
				miss("dchoices replication %.3f > wchoices %.3f + 0.05 at s=%.1f n=%d S=%d", r.res.Replication, w.Replication, r.s, r.n, r.src)
			}
		}
	}
	t.Logf("%d target misses over %d rows", misses, len(rows))
	require.Zero(t, misses)
}
