package sketch

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Golden files under testdata/ pin the binary encodings. They are rewritten
// only by `go -C sketch test . -run Golden -update` after an intended format
// change (with a version bump); never edit them to make a test pass.
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// checkGolden compares got with testdata/name, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go -C sketch test . -run Golden -update once")
	require.Equal(t, want, got, "encoding of %s changed; if intended, bump the version and run with -update", name)
}
