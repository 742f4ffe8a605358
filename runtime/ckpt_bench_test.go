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
// The cached forms read from the page cache; the cold ones first drop the
// files' cached pages (Linux), so that they read from the disk.
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
	paths := make([]string, len(files))
	for i, name := range files {
		paths[i] = filepath.Join(dir, filepath.FromSlash(name))
	}
	drop := func(b *testing.B) {
		b.StopTimer()
		for _, p := range paths {
			if !dropCache(p) {
				b.Skip("cannot drop the page cache here")
			}
		}
		b.StartTimer()
	}
	read := func(b *testing.B) {
		for _, p := range paths {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	restore := func(b *testing.B) {
		c, err := checkpoint.Read(ctx, store, 1)
		if err != nil {
			b.Fatal(err)
		}
		st, _ := c.File("state")
		if err := newState().RestoreState(st); err != nil {
			b.Fatal(err)
		}
	}
	for _, cold := range []bool{false, true} {
		suffix := "cached"
		if cold {
			suffix = "cold"
		}
		b.Run("read-bytes/"+suffix, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if cold {
					drop(b)
				}
				read(b)
			}
		})
		b.Run("restore/"+suffix, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if cold {
					drop(b)
				}
				restore(b)
			}
		})
	}
}

// BenchmarkKeyedCountCheckpoint is BenchmarkKeyedCount's job (hash, 2
// workers, one source) without checkpoints and with one every 5 ms: the
// CPU the checkpoints add per record, over the checkpoints taken per run
// (checkpoints/op, the final one included), is what one checkpoint of this
// state costs (ckpt-bytes: the largest one's size).
func BenchmarkKeyedCountCheckpoint(b *testing.B) {
	recs := keyedCountInput()
	for _, every := range []time.Duration{0, 5 * time.Millisecond} {
		name := "interval=none"
		if every > 0 {
			name = "interval=" + every.String()
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var checkpoints, maxBytes int64
			cpu0 := cpuTime()
			for b.Loop() {
				opts := []JobOpt{BatchSize(1024), QueueBatches(16)}
				if every > 0 {
					store, err := checkpoint.NewDir(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					opts = append(opts, Checkpoint(every, store))
				}
				j, err := NewJob(opts...)
				if err != nil {
					b.Fatal(err)
				}
				agg := WindowAggregate(Source(j, "src", contiguous(recs, 1)), "count", operators.Count[stream.Record](), Parallelism(2))
				runCount(b, j, agg.Results, 2)
				st := j.CheckpointStats()
				checkpoints += int64(st.Completed)
				maxBytes = max(maxBytes, st.MaxBytes)
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
			reportCPU(b, cpu0, len(recs))
			b.ReportMetric(float64(checkpoints)/float64(b.N), "checkpoints/op")
			b.ReportMetric(float64(maxBytes), "ckpt-bytes")
		})
	}
}
