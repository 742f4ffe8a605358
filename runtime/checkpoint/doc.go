// Package checkpoint stores the checkpoints of a runtime job: one file per
// worker snapshot, then a manifest that lists every file with its size and
// CRC-32C checksum. A checkpoint is complete when its manifest is stored;
// Latest returns the newest complete checkpoint whose manifest and files
// all verify, skipping (and reporting) damaged or partial ones, so a
// checkpoint is never half-loaded. A Store that fails to read (an I/O
// error, not a missing or damaged file) ends the search with its error:
// an older checkpoint is never taken because the store failed.
//
// What the checksums cannot see: a file whose bytes were changed and whose
// manifest entry was rewritten to match (a checksum is no signature), and
// state kept outside the checkpoint that a worker's snapshot only names
// (a Pebble snapshot is verified by its own reference, see pebblestate).
//
// A Store is the byte storage underneath: Dir, a local directory, is the
// embedded default (each file written to a temporary name, fsynced,
// renamed, and the directory fsynced, so a crash leaves the old file or
// the new one, never a torn one; a symbolic link below its root is
// refused, ErrSymlink, never followed); an object store plugs in by implementing
// Store's four methods. Checkpoint IDs increase; Retain keeps the newest
// complete checkpoints and deletes the rest.
//
// Layout: checkpoint id's files are named "<id as 16 hex digits>/<file>",
// its manifest "<id>/MANIFEST". The manifest encoding (version 2) is the
// magic "SKCP", a version byte, the id, a flags byte (bit 0: End, an
// end-of-input checkpoint, written when every worker of the job had
// ended), the job's stages (name and parallelism, which a restore checks
// against the job), the files (name, size, CRC-32C), and a CRC-32C of
// everything before it. Version 1, without the flags byte, is still read
// (End false). Clear deletes every checkpoint of a store.
//
// Functions of this package are safe for concurrent use when the Store's
// methods are; Dir's are.
package checkpoint
