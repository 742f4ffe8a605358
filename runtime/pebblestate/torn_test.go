package pebblestate_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/pebblestate"
)

// snapFiles returns the files of worker 0 of stage s's snapshot 1 under
// dir whose names start with prefix or end with suffix.
func snapFiles(t *testing.T, dir, match string) []string {
	t.Helper()
	snap := filepath.Join(dir, "s.0", "snap", "1")
	ents, err := os.ReadDir(snap)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), match) || strings.HasSuffix(e.Name(), match) {
			out = append(out, filepath.Join(snap, e.Name()))
		}
	}
	require.NotEmpty(t, out, "snapshot has a %s file", match)
	return out
}

// TestTornSnapshot: a snapshot whose files were damaged after it was
// taken (a MANIFEST cut by one byte or to 50 bytes or with a byte
// flipped, an sstable cut, flipped or gone, OPTIONS or the manifest marker gone) is
// refused by Restore with ErrCorruptSnapshot, and the database keeps what
// it held.
func TestTornSnapshot(t *testing.T) {
	damage := map[string]func(t *testing.T, dir string){
		"manifest cut by one": func(t *testing.T, dir string) {
			p := snapFiles(t, dir, "MANIFEST")[0]
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, fi.Size()-1))
		},
		"manifest cut to 50": func(t *testing.T, dir string) { require.NoError(t, os.Truncate(snapFiles(t, dir, "MANIFEST")[0], 50)) },
		"manifest byte 60":   func(t *testing.T, dir string) { flipAt(t, snapFiles(t, dir, "MANIFEST")[0], 60) },
		"sst cut":            func(t *testing.T, dir string) { require.NoError(t, os.Truncate(snapFiles(t, dir, ".sst")[0], 10)) },
		"sst byte":           func(t *testing.T, dir string) { flipAt(t, snapFiles(t, dir, ".sst")[0], 100) },
		"sst gone":           func(t *testing.T, dir string) { require.NoError(t, os.Remove(snapFiles(t, dir, ".sst")[0])) },
		"options gone":       func(t *testing.T, dir string) { require.NoError(t, os.Remove(snapFiles(t, dir, "OPTIONS")[0])) },
		"marker gone":        func(t *testing.T, dir string) { require.NoError(t, os.Remove(snapFiles(t, dir, "marker.")[0])) },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			b, err := pebblestate.Open(dir)
			require.NoError(t, err)
			defer func() { require.NoError(t, b.Close()) }()
			kv, err := b.Open("s", 0)
			require.NoError(t, err)
			kv.SetMerge(sumUvarints)
			add := func(keys int) {
				for k := range keys {
					require.NoError(t, kv.Merge(binary.BigEndian.AppendUint32(nil, uint32(k)), binary.AppendUvarint(nil, 1)))
				}
				require.NoError(t, kv.Commit())
			}
			add(400)
			ref, err := kv.Snapshot()
			require.NoError(t, err)
			add(500)
			before := scanAll(t, kv)
			f(t, dir)
			err = kv.Restore(ref)
			require.ErrorIs(t, err, pebblestate.ErrCorruptSnapshot)
			require.Equal(t, before, scanAll(t, kv), "the database as it was")
		})
	}
	t.Run("intact", func(t *testing.T) {
		b, err := pebblestate.Open(t.TempDir())
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close()) }()
		kv, err := b.Open("s", 0)
		require.NoError(t, err)
		kv.SetMerge(sumUvarints)
		require.NoError(t, kv.Merge([]byte("k"), binary.AppendUvarint(nil, 3)))
		require.NoError(t, kv.Commit())
		ref, err := kv.Snapshot()
		require.NoError(t, err)
		require.NoError(t, kv.Merge([]byte("k"), binary.AppendUvarint(nil, 4)))
		require.NoError(t, kv.Commit())
		require.NoError(t, kv.Restore(ref))
		require.Equal(t, map[string]uint64{"k": 3}, scanAll(t, kv))
	})
}

func flipAt(t *testing.T, p string, at int) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Greater(t, len(b), at)
	b[at] ^= 0x01
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

func scanAll(t *testing.T, kv operators.KVStore) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	require.NoError(t, kv.Scan(nil, func(key, val []byte) error {
		v, _ := binary.Uvarint(val)
		m[string(slices.Clone(key))] = v
		return nil
	}))
	return m
}

// TestCorruptAtRunTime pins that a database file damaged while the job
// runs (an sstable changed under the store) fails the read that finds it
// with ErrCorruptData and a one-line message, not a panic, and fails the
// store from then on.
func TestCorruptAtRunTime(t *testing.T) {
	dir := t.TempDir()
	b, err := pebblestate.Open(dir, pebblestate.CacheSize(0))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	kv, err := b.Open("s", 0)
	require.NoError(t, err)
	kv.SetMerge(sumUvarints)
	one := binary.AppendUvarint(nil, 1)
	for k := range 3000 {
		require.NoError(t, kv.Merge(binary.BigEndian.AppendUint32(nil, uint32(k)), one))
	}
	_, err = kv.Snapshot()
	require.NoError(t, err)
	ssts, err := filepath.Glob(filepath.Join(dir, "s.0", "db-0", "*.sst"))
	require.NoError(t, err)
	require.Len(t, ssts, 1)
	// A new file at the table's name (the snapshot keeps the old one).
	data, err := os.ReadFile(ssts[0])
	require.NoError(t, err)
	require.NoError(t, os.Remove(ssts[0]))
	for i := 100; i < 400; i++ {
		data[i] ^= 0xff
	}
	require.NoError(t, os.WriteFile(ssts[0], data, 0o644))

	_, _, err = kv.Get(nil, binary.BigEndian.AppendUint32(nil, 5))
	require.ErrorIs(t, err, pebblestate.ErrCorruptData)
	require.NotContains(t, err.Error(), "\n")
	err = kv.Scan(nil, func(_, _ []byte) error { return nil })
	require.ErrorIs(t, err, pebblestate.ErrCorruptData)
	require.ErrorIs(t, kv.Commit(), pebblestate.ErrCorruptData)
}
