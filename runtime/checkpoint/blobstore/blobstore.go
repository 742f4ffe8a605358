package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The drivers Open's URLs may name: s3://, file://, mem://. GCS's and
	// Azure's (gocloud.dev/blob/gcsblob, azureblob) are a blank import
	// away in the caller's program, which then opens its bucket with them.
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// ErrInvalidParameter reports a bad argument; the message names it.
var ErrInvalidParameter = errors.New("blobstore: invalid parameter")

// Store is a checkpoint.Store in a bucket of gocloud.dev/blob: each name
// is an object under the store's prefix. Put uploads the whole blob in
// one write, which the object stores make visible only once complete (a
// Put cut short leaves the previous object or none, never part of one),
// so a checkpoint is complete only once its manifest, written last by
// checkpoint.Commit, is stored. Safe for concurrent use.
type Store struct {
	b *blob.Bucket
}

var _ checkpoint.Store = (*Store)(nil)

// Open opens the bucket that urlstr names (gocloud.dev/blob's URLs:
// s3://bucket?region=eu-west-1, file:///path, mem://, and gs:// or
// azblob:// where the program imports those drivers), keeping checkpoints
// under its prefix= query parameter, if any. Credentials come from each cloud's usual chain (the
// environment, the instance's role, ...). Close the Store when done. For
// a local disk prefer checkpoint.Dir, which fsyncs every file and its
// directory; file:// URLs suit tests and shared mounts.
func Open(ctx context.Context, urlstr string) (*Store, error) {
	if urlstr == "" {
		return nil, fmt.Errorf("%w: url = \"\", want a bucket URL (s3://, gs://, azblob://, file://, mem://)", ErrInvalidParameter)
	}
	if u, err := url.Parse(urlstr); err == nil && u.Scheme == "file" && u.Path != "" {
		// A directory the first run creates, as checkpoint.NewDir does.
		if err := os.MkdirAll(u.Path, 0o755); err != nil {
			return nil, fmt.Errorf("blobstore: open %s: %w", urlstr, err)
		}
	}
	b, err := blob.OpenBucket(ctx, urlstr)
	if err != nil {
		return nil, fmt.Errorf("blobstore: open %s: %w", urlstr, err)
	}
	return &Store{b: b}, nil
}

// New wraps a bucket the caller opened (with a client of its own, say);
// closing the Store closes the bucket.
func New(b *blob.Bucket) (*Store, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: bucket = nil", ErrInvalidParameter)
	}
	return &Store{b: b}, nil
}

// Prefixed returns a Store of the keys under prefix of s's bucket (a
// folder: it should end with "/"), for one job among several in a
// bucket; s itself is then closed, and closing the returned Store closes
// the bucket.
func (s *Store) Prefixed(prefix string) (*Store, error) {
	if prefix == "" || !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("%w: prefix %q, want a folder ending in \"/\"", ErrInvalidParameter, prefix)
	}
	if err := checkName(strings.TrimSuffix(prefix, "/")); err != nil {
		return nil, err
	}
	return &Store{b: blob.PrefixedBucket(s.b, prefix)}, nil
}

// IsURL reports whether dir names a bucket (it has a scheme, as in
// s3://bucket) rather than a local directory.
func IsURL(dir string) bool {
	i := strings.Index(dir, "://")
	return i > 0 && !strings.ContainsAny(dir[:i], "/\\")
}

// Close closes the bucket.
func (s *Store) Close() error { return s.b.Close() }

// Put implements checkpoint.Store.
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := s.b.WriteAll(ctx, name, data, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("blobstore: put %s: %w", name, err)
	}
	return nil
}

// Get implements checkpoint.Store: a missing name's error wraps
// fs.ErrNotExist.
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := s.b.ReadAll(ctx, name)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("blobstore: get %s: %w", name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("blobstore: get %s: %w", name, err)
	}
	return b, nil
}

// List implements checkpoint.Store.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	it := s.b.List(&blob.ListOptions{Prefix: prefix})
	var names []string
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("blobstore: list %s: %w", prefix, err)
		}
		if !o.IsDir {
			names = append(names, o.Key)
		}
	}
	return names, nil
}

// Delete implements checkpoint.Store: a missing name is not an error.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := s.b.Delete(ctx, name)
	if err == nil || gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return fmt.Errorf("blobstore: delete %s: %w", name, err)
}

// checkName refuses what checkpoint.Store's names may not be.
func checkName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return fmt.Errorf("%w: name %q, want a slash-separated relative path", ErrInvalidParameter, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("%w: name %q, want no empty, \".\" or \"..\" element", ErrInvalidParameter, name)
		}
	}
	for _, r := range name {
		if r < 0x21 || r > 0x7e {
			return fmt.Errorf("%w: name %q, want printable ASCII", ErrInvalidParameter, name)
		}
	}
	return nil
}
