package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// save writes checkpoint id with files a and b (their contents naming the
// id) and commits it.
func save(t *testing.T, s Store, id uint64) {
	t.Helper()
	ctx := context.Background()
	m := Manifest{ID: id, Stages: []Stage{{"src", 2}, {"count/final", 3}}}
	for _, name := range []string{"a", "b"} {
		f, err := WriteFile(ctx, s, id, name, []byte(fmt.Sprintf("%s of %d", name, id)))
		require.NoError(t, err)
		m.Files = append(m.Files, f)
	}
	require.NoError(t, Commit(ctx, s, m))
}

func newDir(t *testing.T) *Dir {
	t.Helper()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	return d
}

// TestLatestReadsBack: the newest complete checkpoint is read back with
// its manifest and files.
func TestLatestReadsBack(t *testing.T) {
	d := newDir(t)
	ctx := context.Background()
	_, _, err := Latest(ctx, d)
	require.ErrorIs(t, err, ErrNoCheckpoint)
	save(t, d, 1)
	save(t, d, 2)
	// Files of checkpoint 3 without a manifest: not complete.
	_, err = WriteFile(ctx, d, 3, "a", []byte("partial"))
	require.NoError(t, err)
	c, skipped, err := Latest(ctx, d)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Equal(t, uint64(2), c.ID)
	require.Equal(t, []Stage{{"src", 2}, {"count/final", 3}}, c.Stages)
	b, ok := c.File("b")
	require.True(t, ok)
	require.Equal(t, "b of 2", string(b))
	require.Equal(t, int64(len("a of 2")+len("b of 2")), c.Bytes())
}

// TestLatestSkipsDamaged: a checkpoint with a corrupted, truncated or
// missing file, or a damaged manifest, is skipped for the one before it,
// and reported; none is half-loaded.
func TestLatestSkipsDamaged(t *testing.T) {
	damage := map[string]func(root string){
		"flipped byte":       func(root string) { flip(t, filepath.Join(root, Prefix(2)+"a"), 0) },
		"truncated file":     func(root string) { truncate(t, filepath.Join(root, Prefix(2)+"b"), 3) },
		"missing file":       func(root string) { require.NoError(t, os.Remove(filepath.Join(root, Prefix(2)+"a"))) },
		"truncated manifest": func(root string) { truncate(t, filepath.Join(root, Prefix(2)+manifestName), 10) },
		"manifest byte":      func(root string) { flip(t, filepath.Join(root, Prefix(2)+manifestName), 7) },
		"empty manifest":     func(root string) { truncate(t, filepath.Join(root, Prefix(2)+manifestName), 0) },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			d := newDir(t)
			save(t, d, 1)
			save(t, d, 2)
			f(d.Root())
			c, skipped, err := Latest(context.Background(), d)
			require.NoError(t, err)
			require.Equal(t, uint64(1), c.ID)
			b, _ := c.File("a")
			require.Equal(t, "a of 1", string(b))
			require.Len(t, skipped, 1)
			require.Equal(t, uint64(2), skipped[0].ID)
			require.ErrorIs(t, skipped[0].Err, ErrCorrupt)
		})
	}
	t.Run("all damaged", func(t *testing.T) {
		d := newDir(t)
		save(t, d, 1)
		flip(t, filepath.Join(d.Root(), Prefix(1)+"a"), 1)
		save(t, d, 2)
		require.NoError(t, os.Remove(filepath.Join(d.Root(), Prefix(2)+"b")))
		_, skipped, err := Latest(context.Background(), d)
		require.ErrorIs(t, err, ErrNoCheckpoint)
		require.ErrorIs(t, err, ErrCorrupt, "the error carries the reasons")
		require.ErrorContains(t, err, "2 skipped; checkpoint 2: ")
		require.ErrorContains(t, err, "; checkpoint 1: ")
		require.Len(t, skipped, 2)
	})
}

// failingGets is a Store whose Get of the names in fail returns err.
type failingGets struct {
	Store
	fail map[string]bool
	err  error
}

func (f failingGets) Get(ctx context.Context, name string) ([]byte, error) {
	if f.fail[name] {
		return nil, f.err
	}
	return f.Store.Get(ctx, name)
}

// TestLatestStoreError: a Store that fails to read (not a missing or
// damaged file) ends the search with its error; Latest never falls back
// to an older checkpoint because the store failed.
func TestLatestStoreError(t *testing.T) {
	io := fmt.Errorf("checkpoint: %w", os.ErrDeadlineExceeded)
	for _, name := range []string{Prefix(2) + manifestName, Prefix(2) + "a"} {
		t.Run(name, func(t *testing.T) {
			d := newDir(t)
			save(t, d, 1)
			save(t, d, 2)
			s := failingGets{Store: d, fail: map[string]bool{name: true}, err: io}
			c, skipped, err := Latest(context.Background(), s)
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			require.NotErrorIs(t, err, ErrCorrupt)
			require.Nil(t, c)
			require.Empty(t, skipped)
			_, err = Read(context.Background(), s, 2)
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
			require.NotErrorIs(t, err, ErrCorrupt)
		})
	}
}

// TestDirSymlinks: a symbolic link below a Dir's root is never followed:
// Put, Get and Delete through it and List over it fail with ErrSymlink,
// and nothing is written outside the root; a root that is a link works.
func TestDirSymlinks(t *testing.T) {
	ctx := context.Background()
	t.Run("checkpoint folder", func(t *testing.T) {
		d := newDir(t)
		save(t, d, 1)
		outside := t.TempDir()
		require.NoError(t, os.Symlink(outside, filepath.Join(d.Root(), Prefix(2)[:16])))
		_, err := WriteFile(ctx, d, 2, "a", []byte("x"))
		require.ErrorIs(t, err, ErrSymlink)
		ents, err := os.ReadDir(outside)
		require.NoError(t, err)
		require.Empty(t, ents, "nothing written through the link")
		require.NoError(t, os.WriteFile(filepath.Join(outside, "a"), []byte("y"), 0o644))
		_, err = d.Get(ctx, Prefix(2)+"a")
		require.ErrorIs(t, err, ErrSymlink)
		require.ErrorIs(t, d.Delete(ctx, Prefix(2)+"a"), ErrSymlink)
		require.FileExists(t, filepath.Join(outside, "a"))
		_, err = IDs(ctx, d)
		require.ErrorIs(t, err, ErrSymlink)
		_, _, err = Latest(ctx, d)
		require.ErrorIs(t, err, ErrSymlink)
		require.ErrorIs(t, Retain(ctx, d, 1), ErrSymlink)
	})
	t.Run("file", func(t *testing.T) {
		d := newDir(t)
		save(t, d, 1)
		target := filepath.Join(t.TempDir(), "target")
		require.NoError(t, os.WriteFile(target, []byte("z"), 0o644))
		p := filepath.Join(d.Root(), Prefix(1)+"a")
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.Symlink(target, p))
		_, err := Read(ctx, d, 1)
		require.ErrorIs(t, err, ErrSymlink)
		require.ErrorIs(t, d.Put(ctx, Prefix(1)+"a", []byte("w")), ErrSymlink)
		b, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, "z", string(b))
	})
	t.Run("root", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(real, link))
		d, err := NewDir(link)
		require.NoError(t, err)
		save(t, d, 1)
		c, _, err := Latest(ctx, d)
		require.NoError(t, err)
		require.Equal(t, uint64(1), c.ID)
		require.FileExists(t, filepath.Join(real, Prefix(1)+manifestName))
	})
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[at] ^= 0x40
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	require.NoError(t, os.Truncate(path, n))
}

// TestRetain: the newest keep complete checkpoints stay, with an
// incomplete newer one (possibly in progress); older ones and stale
// incomplete ones go.
func TestRetain(t *testing.T) {
	d := newDir(t)
	ctx := context.Background()
	for id := uint64(1); id <= 4; id++ {
		save(t, d, id)
	}
	_, err := WriteFile(ctx, d, 2, "stale", []byte("x"))
	require.NoError(t, err)
	_, err = WriteFile(ctx, d, 5, "a", []byte("in progress"))
	require.NoError(t, err)
	require.NoError(t, Retain(ctx, d, 2))
	ids, err := IDs(ctx, d)
	require.NoError(t, err)
	require.Equal(t, []uint64{4, 3}, ids)
	names, err := d.List(ctx, "")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{
		Prefix(3) + "a", Prefix(3) + "b", Prefix(3) + manifestName,
		Prefix(4) + "a", Prefix(4) + "b", Prefix(4) + manifestName, Prefix(5) + "a",
	}, names)
	ents, err := os.ReadDir(d.Root())
	require.NoError(t, err)
	require.Len(t, ents, 3, "deleted checkpoints leave no folder")
	require.ErrorIs(t, Retain(ctx, d, 0), ErrInvalidParameter)
}

// TestDirPut: Put replaces atomically and leaves no temporary file; a
// leftover temporary file (a Put cut short) is not listed; bad names are
// refused.
func TestDirPut(t *testing.T) {
	d := newDir(t)
	ctx := context.Background()
	require.NoError(t, d.Put(ctx, "x/y", []byte("one")))
	require.NoError(t, d.Put(ctx, "x/y", []byte("two")))
	b, err := d.Get(ctx, "x/y")
	require.NoError(t, err)
	require.Equal(t, "two", string(b))
	require.NoError(t, os.WriteFile(filepath.Join(d.Root(), "x", tmpPrefix+"123"), []byte("torn"), 0o644))
	names, err := d.List(ctx, "x/")
	require.NoError(t, err)
	require.Equal(t, []string{"x/y"}, names)
	_, err = d.Get(ctx, "x/z")
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, bad := range []string{"", "/abs", "../up", "a/../b", "a//b", tmpPrefix + "x"} {
		require.ErrorIs(t, d.Put(ctx, bad, nil), ErrInvalidParameter, bad)
	}
	require.NoError(t, d.Delete(ctx, "x/y"))
	require.NoError(t, d.Delete(ctx, "x/y"), "deleting a missing name is not an error")
	_, err = os.Stat(filepath.Join(d.Root(), "x"))
	require.ErrorIs(t, err, fs.ErrNotExist, "the emptied folder and its torn file are gone")
	_, err = NewDir("")
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestManifestRoundTrip: a manifest decodes to itself; every truncation
// and every single-byte change is refused.
func TestManifestRoundTrip(t *testing.T) {
	m := Manifest{ID: 42, Stages: []Stage{{"src", 1}, {"agg", 8}}, Files: []File{{"s0-w0", 10, 0xdeadbeef}, {"s1-w7", 0, 1}}}
	b, err := m.AppendBinary(nil)
	require.NoError(t, err)
	var got Manifest
	require.NoError(t, got.UnmarshalBinary(b))
	require.Equal(t, m, got)
	for i := range b {
		require.ErrorIs(t, got.UnmarshalBinary(b[:i]), ErrCorrupt)
		c := append([]byte(nil), b...)
		c[i] ^= 1
		require.ErrorIs(t, got.UnmarshalBinary(c), ErrCorrupt)
	}
	require.Equal(t, m, got, "a refused manifest leaves the receiver")
	_, err = (&Manifest{Stages: []Stage{{"x", 0}}}).AppendBinary(nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func FuzzManifest(f *testing.F) {
	m := Manifest{ID: 7, Stages: []Stage{{"src", 2}}, Files: []File{{"a", 3, 9}}}
	b, _ := m.AppendBinary(nil)
	f.Add(b)
	f.Add(b[:len(b)-4])
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Manifest
		if err := m.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := m.AppendBinary(nil)
		require.NoError(t, err)
		requireCanonical(t, b, again, m)
	})
}

// FuzzManifestBody fuzzes the body behind a valid checksum, which random
// bytes almost never reach.
func FuzzManifestBody(f *testing.F) {
	m := Manifest{ID: 7, Stages: []Stage{{"src", 2}}, Files: []File{{"a", 3, 9}}}
	b, _ := m.AppendBinary(nil)
	f.Add(b[:len(b)-4])
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append(append([]byte(nil), body...), 0, 0, 0, 0)
		sum := Checksum(body)
		b[len(body)], b[len(body)+1], b[len(body)+2], b[len(body)+3] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
		var m Manifest
		if err := m.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := m.AppendBinary(nil)
		require.NoError(t, err)
		requireCanonical(t, b, again, m)
	})
}

// requireCanonical checks that the current encoding of m, decoded from b,
// is b (version 2), or decodes to m (b of version 1, re-encoded as 2).
func requireCanonical(t *testing.T, b, again []byte, m Manifest) {
	t.Helper()
	if b[4] == manifestVersion {
		require.Equal(t, b, again, "the encoding is canonical")
		return
	}
	var back Manifest
	require.NoError(t, back.UnmarshalBinary(again))
	require.Equal(t, m, back)
}

// v1Manifest is m's encoding in version 1 (no flags byte), as stores
// written before End hold them.
func v1Manifest(t *testing.T, m Manifest) []byte {
	t.Helper()
	require.False(t, m.End)
	b, err := m.AppendBinary(nil)
	require.NoError(t, err)
	idLen := len(binary.AppendUvarint(nil, m.ID))
	body := append(append([]byte(nil), b[:5+idLen]...), b[5+idLen+1:len(b)-4]...)
	body[4] = 1
	return binary.LittleEndian.AppendUint32(body, Checksum(body))
}

// TestManifestEnd: the End flag of an end-of-input checkpoint round-trips,
// ReadManifest reads it without the files, and a version 1 manifest
// (before the flag) is still read, End false.
func TestManifestEnd(t *testing.T) {
	m := Manifest{ID: 3, Stages: []Stage{{"src", 1}}, Files: []File{{"a", 1, 2}}, End: true}
	b, err := m.AppendBinary(nil)
	require.NoError(t, err)
	var got Manifest
	require.NoError(t, got.UnmarshalBinary(b))
	require.Equal(t, m, got)

	m.End = false
	var old Manifest
	require.NoError(t, old.UnmarshalBinary(v1Manifest(t, m)))
	require.Equal(t, m, old)

	d := newDir(t)
	ctx := context.Background()
	m.End = true
	require.NoError(t, Commit(ctx, d, m)) // no files written: ReadManifest does not look
	rm, err := ReadManifest(ctx, d, 3)
	require.NoError(t, err)
	require.True(t, rm.End)
	_, err = ReadManifest(ctx, d, 4)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = Read(ctx, d, 3)
	require.ErrorIs(t, err, ErrCorrupt, "Read verifies the files")
}

// TestClear: Clear deletes every checkpoint, complete or not, and leaves
// other names.
func TestClear(t *testing.T) {
	d := newDir(t)
	ctx := context.Background()
	save(t, d, 1)
	save(t, d, 2)
	_, err := WriteFile(ctx, d, 3, "a", []byte("partial"))
	require.NoError(t, err)
	require.NoError(t, d.Put(ctx, "other/x", []byte("kept")))
	require.NoError(t, Clear(ctx, d))
	ids, err := IDs(ctx, d)
	require.NoError(t, err)
	require.Empty(t, ids)
	names, err := d.List(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{"other/x"}, names)
	_, _, err = Latest(ctx, d)
	require.ErrorIs(t, err, ErrNoCheckpoint)
}
