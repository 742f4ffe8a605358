package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrInvalidParameter reports an argument outside its domain; the message
// names it.
var ErrInvalidParameter = errors.New("checkpoint: invalid parameter")

// Store is where checkpoints are kept: named byte blobs. Names are
// slash-separated paths of printable ASCII without "." or ".." elements.
type Store interface {
	// Put stores data under name, replacing what was there. When it
	// returns nil the data is durable; a Put cut short by a crash leaves
	// the previous blob or none, never part of data.
	Put(ctx context.Context, name string, data []byte) error
	// Get returns the blob under name, or an error wrapping
	// fs.ErrNotExist when there is none.
	Get(ctx context.Context, name string) ([]byte, error)
	// List returns the names that start with prefix, in any order.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes name; deleting a missing name is not an error.
	Delete(ctx context.Context, name string) error
}

// ErrSymlink reports a symbolic link below a Dir's root: a Dir holds only
// directories and regular files, so that what it writes, lists and
// deletes stays below its root.
var ErrSymlink = errors.New("checkpoint: symbolic link in the store")

// Dir is a Store in a local directory: each name is a file below it.
// Put writes a temporary file in the name's directory, fsyncs it, renames
// it over the name and fsyncs the directory. A symbolic link below the
// root (to a checkpoint's folder, say) is refused by every method with an
// error wrapping ErrSymlink, never followed; the root itself may be one.
// Safe for concurrent use (distinct names; concurrent Puts of one name
// leave one of them).
type Dir struct{ root string }

// NewDir returns a Store in directory root, creating it if needed. A root
// that is a symbolic link is resolved once, here.
func NewDir(root string) (*Dir, error) {
	if root == "" {
		return nil, fmt.Errorf("%w: dir = %q, want a directory", ErrInvalidParameter, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &Dir{root: resolved}, nil
}

// noLinks returns an error wrapping ErrSymlink when an element of name's
// path below the root, its last included, is a symbolic link. Missing
// elements are not an error (the caller meets them).
func (d *Dir) noLinks(name string) error {
	p := d.root
	for _, el := range strings.Split(name, "/") {
		p = filepath.Join(p, el)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s", ErrSymlink, p)
		}
	}
	return nil
}

// Root is the directory.
func (d *Dir) Root() string { return d.root }

// tmpPrefix starts the names of files being written; List skips them.
const tmpPrefix = ".tmp-"

func (d *Dir) path(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || !fs.ValidPath(name) {
		return "", fmt.Errorf("%w: name = %q, want a relative slash-separated path", ErrInvalidParameter, name)
	}
	for _, el := range strings.Split(name, "/") {
		if strings.HasPrefix(el, tmpPrefix) {
			return "", fmt.Errorf("%w: name = %q, want no element starting with %q", ErrInvalidParameter, name, tmpPrefix)
		}
	}
	return filepath.Join(d.root, filepath.FromSlash(name)), nil
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, name string, data []byte) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.path(name)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := d.noLinks(name); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return SyncDir(dir)
}

// SyncDir makes the renames done in directory dir durable (an fsync of
// the directory).
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	if err := d.noLinks(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return b, nil
}

// List implements Store.
func (d *Dir) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var names []string
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s", ErrSymlink, p)
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), tmpPrefix) {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// Delete implements Store. It also removes the name's directory when that
// leaves it empty, and leftover temporary files of an interrupted Put.
func (d *Dir) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.path(name)
	if err != nil {
		return err
	}
	if err := d.noLinks(name); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	dir := filepath.Dir(p)
	if dir == filepath.Clean(d.root) {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // gone already
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tmpPrefix) {
			return nil
		}
	}
	for _, e := range ents {
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
	_ = os.Remove(dir)
	return nil
}
