// Package blobstore keeps a job's checkpoints on object storage, so that
// they outlive the machine: Store is a checkpoint.Store on
// gocloud.dev/blob, opened by URL (Open: s3://bucket?region=eu-west-1,
// file:///path, mem://; gs:// and azblob:// once the program imports
// gocloud.dev/blob/gcsblob or azureblob) or from a bucket the caller
// opened (New), with a prefix per job (Prefixed).
//
// # Guarantees
//
// Those of checkpoint.Dir: each checkpoint file is one object, written in
// one upload that the object store makes visible only once complete, so
// an interrupted Put leaves the old object or none; checkpoint.Commit
// writes the manifest last, so a crash between a checkpoint's files and
// its manifest leaves it incomplete, and checkpoint.Latest (Restore, a
// restart) takes the newest complete one, skipping and reporting those
// whose files fail their CRC-32C. S3 has been strongly consistent for
// reads after writes and for lists since December 2020, which List and
// Latest rely on.
//
// # Cost and concurrency
//
// A checkpoint costs one PUT per worker snapshot and one for the
// manifest; a restore one LIST and one GET per file. A Store is safe for
// concurrent use.
package blobstore
