package datasets

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dataFile returns the path of a data set for a test: it fails when the
// data is missing, and skips only where data/ is absent by design (the
// module cache of a user's `go test all`).
func dataFile(tb testing.TB, name string) string {
	tb.Helper()
	p, err := DataFile(name)
	if errors.Is(err, ErrNotShipped) {
		tb.Skip(err)
	}
	require.NoError(tb, err)
	return p
}

// repoData returns the repository's data/ folder, ignoring $SKEWER_DATASETS.
func repoData(t *testing.T) string {
	t.Helper()
	dir, err := repoDataDir()
	if errors.Is(err, ErrNotShipped) {
		t.Skip(err)
	}
	require.NoError(t, err)
	return dir
}

func sha256Hex(t *testing.T, r io.Reader) string {
	t.Helper()
	h := sha256.New()
	_, err := io.Copy(h, r)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// TestDataManifest holds every file of data/ to data/SHA256SUMS: the sums
// of the compressed file and of its content, and no .gz file unlisted.
func TestDataManifest(t *testing.T) {
	dir := repoData(t)
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	require.NoError(t, err)
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		require.Len(t, fields, 3, "SHA256SUMS line %q: want <sha256 of file> <sha256 of content> <name>", line)
		gzSum, contentSum, name := fields[0], fields[1], fields[2]
		listed[name] = true
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			raw, err := os.Open(p)
			require.NoError(t, err)
			defer raw.Close()
			require.Equal(t, gzSum, sha256Hex(t, raw), "%s: the file's SHA-256 differs from SHA256SUMS", name)
			content, err := OpenFile(p)
			require.NoError(t, err)
			defer content.Close()
			require.Equal(t, contentSum, sha256Hex(t, content), "%s: the decompressed content's SHA-256 differs from SHA256SUMS", name)
		})
	}
	require.NoError(t, sc.Err())
	gz, err := filepath.Glob(filepath.Join(dir, "*.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, gz)
	for _, p := range gz {
		require.True(t, listed[filepath.Base(p)], "%s is not in SHA256SUMS", filepath.Base(p))
	}
	for _, name := range []string{"pg135-les-miserables.txt.gz", "retail.dat.gz", "count_1w.txt.gz"} {
		require.True(t, listed[name], "%s is not in SHA256SUMS", name)
	}
}

// writeModule writes a go.mod declaring mod in dir, with a sub-folder pkg.
func writeModule(t *testing.T, dir, mod string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// a comment\nmodule "+mod+" // trailing\n\ngo 1.26\n"), 0o644))
}

func TestDataDir(t *testing.T) {
	t.Setenv(DataDirEnv, "")
	dir, err := DataDir()
	require.NoError(t, err)
	require.Equal(t, "data", filepath.Base(dir))
	require.FileExists(t, filepath.Join(dir, "SHA256SUMS"))
	root := filepath.Dir(dir)

	t.Run("compressed file", func(t *testing.T) {
		p, err := DataFile("retail.dat")
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, "retail.dat.gz"), p)
	})
	// The nested modules bench/peers and data/ itself lead to the root's data/.
	for _, sub := range []string{"bench/peers", "data", "cmd/streambench"} {
		t.Run("from "+sub, func(t *testing.T) {
			t.Chdir(filepath.Join(root, sub))
			got, err := DataDir()
			require.NoError(t, err)
			require.Equal(t, dir, got)
		})
	}
	t.Run("env overrides, plain files", func(t *testing.T) {
		env := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(env, "retail.dat"), []byte("1 2\n"), 0o644))
		t.Setenv(DataDirEnv, env)
		p, err := DataFile("retail.dat")
		require.NoError(t, err)
		require.Equal(t, filepath.Join(env, "retail.dat"), p)
		_, err = DataFile("count_1w.txt")
		require.ErrorIs(t, err, ErrNoData)
		require.NotErrorIs(t, err, ErrNotShipped)
		require.Contains(t, err.Error(), "count_1w.txt")
		require.Contains(t, err.Error(), env)
	})
	t.Run("env not a folder", func(t *testing.T) {
		t.Setenv(DataDirEnv, filepath.Join(t.TempDir(), "nonexistent"))
		_, err := DataDir()
		require.ErrorIs(t, err, ErrNoData)
		require.Contains(t, err.Error(), "$"+DataDirEnv)
	})
	t.Run("bad name", func(t *testing.T) {
		for _, name := range []string{"", "../retail.dat", "data/retail.dat"} {
			_, err := DataFile(name)
			require.ErrorIs(t, err, ErrInvalidParameter, name)
			require.Contains(t, err.Error(), "name")
		}
	})
	t.Run("another module", func(t *testing.T) {
		other := t.TempDir()
		writeModule(t, other, "example.com/other")
		t.Chdir(filepath.Join(other, "pkg"))
		_, err := DataDir()
		require.ErrorIs(t, err, ErrNoData)
		require.NotErrorIs(t, err, ErrNotShipped)
		require.Contains(t, err.Error(), "no go.mod declaring module "+modulePath)
	})
	// A copy of the module without data/: fails in a clone, skips (ErrNotShipped)
	// in the module cache.
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	for _, tc := range []struct {
		name    string
		root    string
		shipped bool
	}{
		{"clone without data", filepath.Join(t.TempDir(), "skewer"), false},
		{"module cache", filepath.Join(cache, "github.com", "skewerhq", "skewer@v1.0.0"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeModule(t, tc.root, `"`+modulePath+`"`)
			t.Chdir(filepath.Join(tc.root, "pkg"))
			_, err := DataFile("retail.dat")
			require.ErrorIs(t, err, ErrNoData)
			require.Contains(t, err.Error(), tc.root)
			if tc.shipped {
				require.ErrorIs(t, err, ErrNotShipped)
			} else {
				require.NotErrorIs(t, err, ErrNotShipped)
			}
		})
	}
}
