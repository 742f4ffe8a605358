// Package pebblestate is a keyed-state backend on Pebble
// (github.com/cockroachdb/pebble/v2, an embedded LSM store compatible with
// RocksDB): a windowed aggregation whose per-key accumulators do not fit in
// memory keeps them on disk.
//
//	b, err := pebblestate.Open(dir)
//	defer b.Close()
//	runtime.WindowAggregate(s, "count", agg, runtime.KeyedStateBackend(b))
//
// Each worker of each stage gets its own Pebble database under dir (see
// Backend.Open); accumulators are encoded by the aggregate's Codec and
// reach Pebble through operators.StoreWindows' write-back cache as merge
// operands: blind writes, which Pebble's merge operator combines with the
// aggregate's Merge when it reads or compacts a key, so a new key costs no
// read. Pebble's write-ahead log is off: what a crash loses comes back from
// a checkpoint.
//
// Checkpoints are incremental. A snapshot (Store.Snapshot, taken when the
// runtime checkpoints the worker) flushes the memtable and makes a Pebble
// checkpoint: a directory of hard links to the database's immutable
// sstables plus a copy of its small manifest, so it costs the data written
// since the last one, not the state. The runtime's checkpoint holds the
// snapshot's reference: its number and every file of it with its size and
// CRC-32C (an sstable's checksum is computed once, when it first appears
// in a snapshot). runtime.Restore verifies every file against the
// reference, reading the whole snapshot once, and reopens the database
// from it (hard links again); a snapshot that does not match its
// reference (a file cut, changed or gone) is refused, ErrCorruptSnapshot,
// the database left as it was. Snapshots live under dir, beside the
// databases, so a job restores on the machine (or volume) that holds dir.
//
// Retention follows completed checkpoints: when a checkpoint's manifest is
// stored, the runtime tells each worker's store (Store.Completed, the
// operators.SnapshotCompleter interface), which marks the snapshot durably
// ("<n>.done" beside it) and deletes all but the newest Keep completed
// snapshots, keeping any newer one a checkpoint in flight may hold; a
// checkpoint that failed leaves a snapshot that never counts. Set Keep at
// least to the runtime checkpoint store's retention.
//
// A full disk fails a store rather than hanging it. Each worker's
// directory reserves a ballast file (Ballast, default twice MemTableSize);
// the first write that finds the disk full deletes it, so that the flush
// Pebble has begun can finish on the room it leaves, and the store fails
// at its next Commit or Snapshot with ErrDiskFull. A flush or compaction
// that fails otherwise (ErrStoreFailed) and a file that fails its
// checksums as the job reads it (ErrCorruptData) fail the store the same
// way; a failed store closes its database and stays failed.
//
// The package is outside the runtime's core: a job that does not import it
// does not compile Pebble.
package pebblestate
