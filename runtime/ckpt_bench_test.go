package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// BenchmarkRestore restores a keyed count's window state of 10^6 keys
// (10^4 under -short) from a checkpoint in a directory: read-bytes reads
// the checkpoint's files as bytes, restore reads and verifies the
// checkpoint (checkpoint.Read) and decodes the state (RestoreState), as a
// restored worker does. Their ratio is restore's cost over the disk's.
func BenchmarkRestore(b *testing.B) {
	keys := 1_000_000
	if testing.Short() {
		keys = 10_000
	}
	win, err := operators.Tumbling(time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	newState := func() *operators.KeyedWindows[stream.Record, uint64, uint64] {
		kw, err := operators.NewKeyedWindows(operators.Count[stream.Record](), win, 0, operators.Complete)
		if err != nil {
			b.Fatal(err)
		}
		return kw
	}
	kw := newState()
	for i := range keys {
		kw.Add(hashx.Mix64(uint64(i)), 0, stream.Record{})
	}
	data, err := kw.AppendState(nil)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	store, err := checkpoint.NewDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	f, err := checkpoint.WriteFile(ctx, store, 1, "state", data)
	if err != nil {
		b.Fatal(err)
	}
	if err := checkpoint.Commit(ctx, store, checkpoint.Manifest{ID: 1, Stages: []checkpoint.Stage{{Name: "count", Workers: 1}}, Files: []checkpoint.File{f}}); err != nil {
		b.Fatal(err)
	}
	files, err := store.List(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read-bytes", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			for _, name := range files {
				if _, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c, err := checkpoint.Read(ctx, store, 1)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := c.File("state")
			if err := newState().RestoreState(st); err != nil {
				b.Fatal(err)
			}
		}
	})
}
