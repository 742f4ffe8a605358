package partition

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Golden placement vectors under testdata/ pin where keys go: keyed state
// and Kafka partitions depend on it. They are rewritten only by
// `go test ./partition -run Golden -update` after an intended placement
// change; never edit them to make a test pass.
var update = flag.Bool("update", false, "rewrite golden placement files under testdata/")

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./partition -run Golden -update once")
	require.Equal(t, string(want), got, "placement of %s changed; if intended, run with -update and say so", name)
}

func goldenKeys() []uint64 {
	keys := []uint64{0, 1, 2, 0xffffffffffffffff, 0x8000000000000000}
	for i := range uint64(27) {
		keys = append(keys, hashx.Mix64(i))
	}
	return keys
}

func TestGoldenPlacement(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10, 50, 100} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			h, err := NewHash(n)
			require.NoError(t, err)
			p, err := NewPKG(n)
			require.NoError(t, err)
			var b strings.Builder
			fmt.Fprintf(&b, "# key hash worker | pkg candidates | dchoices d=%d distinct | dchoices-paper d=%d\n", min(n, 7), min(n, 7))
			for _, k := range goldenKeys() {
				dist := &dChoices{load: make([]uint64, n), d: min(n, 7), strides: coprimes(n)}
				paper := &dChoices{load: make([]uint64, n), d: min(n, 7), strides: coprimes(n), paper: true}
				fmt.Fprintf(&b, "%016x %d | %v | %v | %v\n", k, h.Route(k), p.(Candidater).Candidates(nil, k),
					dist.headCandidates(nil, k), paper.headCandidates(nil, k))
			}
			checkGolden(t, fmt.Sprintf("placement_n%d.golden", n), b.String())
		})
	}
}
