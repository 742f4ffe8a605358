package nexmark

import (
	"bufio"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdata/events.golden pins the stream: the first goldenEvents events of
// goldenConfig in full, one per line, then the FNV-1a hash of the first
// goldenHashed events in the same format. It is rewritten only by
// `go test ./nexmark -run Golden -update` after an intended change of the
// generator; never edit it to make a test pass. Prices assume IEEE-754
// float64 arithmetic as Go computes it on amd64.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

const (
	goldenFile   = "events.golden"
	goldenEvents = 20
	goldenHashed = 100_000
)

func goldenConfig() Config {
	c := DefaultConfig()
	c.Seed = 29
	c.FirstEventTime = 1_700_000_000_000_000_000
	return c
}

// formatEvent writes the event's number, time, kind and its record's
// fields.
func formatEvent(e *Event) string {
	switch e.Kind {
	case KindPerson:
		return fmt.Sprintf("%d %d person %+v", e.Number, e.Time, e.Person)
	case KindAuction:
		return fmt.Sprintf("%d %d auction %+v", e.Number, e.Time, e.Auction)
	}
	return fmt.Sprintf("%d %d bid %+v", e.Number, e.Time, e.Bid)
}

func goldenLines(t *testing.T) []string {
	t.Helper()
	g := newGen(t, goldenConfig())
	var lines []string
	h := fnv.New64a()
	each(t, g, goldenHashed, func(e *Event) {
		s := formatEvent(e)
		if e.Number < goldenEvents {
			lines = append(lines, s)
		}
		h.Write([]byte(s))
		h.Write([]byte{'\n'})
	})
	return append(lines, fmt.Sprintf("fnv64a of the first %d events: %016x", goldenHashed, h.Sum64()))
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", goldenFile)
	got := goldenLines(t)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644))
		return
	}
	f, err := os.Open(path)
	require.NoError(t, err, "run go test ./nexmark -run Golden -update once")
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Equal(t, want, got)
}
