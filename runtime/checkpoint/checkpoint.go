package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// ErrNoCheckpoint reports a store without a complete checkpoint that
// verifies.
var ErrNoCheckpoint = errors.New("checkpoint: no complete checkpoint")

// manifestName is the name of a checkpoint's manifest within its folder.
const manifestName = "MANIFEST"

// Prefix is the folder of checkpoint id in a Store: 16 hex digits and a
// slash.
func Prefix(id uint64) string { return fmt.Sprintf("%016x/", id) }

// parseID returns the checkpoint id of a store name.
func parseID(name string) (uint64, bool) {
	dir, _, ok := strings.Cut(name, "/")
	if !ok || len(dir) != 16 {
		return 0, false
	}
	id, err := strconv.ParseUint(dir, 16, 64)
	return id, err == nil
}

// WriteFile stores one file of checkpoint id and returns its manifest
// entry.
func WriteFile(ctx context.Context, s Store, id uint64, name string, data []byte) (File, error) {
	if err := s.Put(ctx, Prefix(id)+name, data); err != nil {
		return File{}, err
	}
	return File{Name: name, Size: int64(len(data)), CRC: Checksum(data)}, nil
}

// Commit stores m's manifest, which makes checkpoint m.ID complete. Its
// files must have been written (WriteFile) first.
func Commit(ctx context.Context, s Store, m Manifest) error {
	if slices.ContainsFunc(m.Files, func(f File) bool { return f.Name == manifestName }) {
		return fmt.Errorf("%w: a file named %s", ErrInvalidParameter, manifestName)
	}
	b, err := m.AppendBinary(nil)
	if err != nil {
		return err
	}
	return s.Put(ctx, Prefix(m.ID)+manifestName, b)
}

// Checkpoint is a complete checkpoint read back and verified.
type Checkpoint struct {
	Manifest
	files map[string][]byte
}

// File returns the contents of the named file and whether the checkpoint
// has it.
func (c *Checkpoint) File(name string) ([]byte, bool) {
	b, ok := c.files[name]
	return b, ok
}

// Bytes is the total size of the checkpoint's files.
func (c *Checkpoint) Bytes() int64 {
	var n int64
	for _, f := range c.Files {
		n += f.Size
	}
	return n
}

// Skipped is a checkpoint Latest passed over, and why.
type Skipped struct {
	ID  uint64
	Err error
}

// IDs returns the ids of the complete checkpoints in s (those with a
// manifest, verified or not), newest first.
func IDs(ctx context.Context, s Store) ([]uint64, error) {
	names, err := s.List(ctx, "")
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for _, n := range names {
		if id, ok := parseID(n); ok && n == Prefix(id)+manifestName {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids, nil
}

// Latest reads the newest complete checkpoint whose manifest decodes and
// whose files all have the recorded size and checksum. Checkpoints newer
// than it that fail are returned in skipped, newest first, with the
// reason (each wraps ErrCorrupt). It returns ErrNoCheckpoint when none
// verifies (wrapping SkippedError of those it skipped, if any), and the
// Store's error when it cannot list or read: a missing file is a failed
// verification, any other Store error ends the search, since an older
// checkpoint is no answer to a store that fails.
func Latest(ctx context.Context, s Store) (*Checkpoint, []Skipped, error) {
	ids, err := IDs(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	var skipped []Skipped
	for _, id := range ids {
		c, err := Read(ctx, s, id)
		if err == nil {
			return c, skipped, nil
		}
		if ctx.Err() != nil {
			return nil, skipped, ctx.Err()
		}
		if !errors.Is(err, ErrCorrupt) {
			// The store failed: an older checkpoint is no answer to that.
			return nil, skipped, err
		}
		skipped = append(skipped, Skipped{ID: id, Err: err})
	}
	if len(skipped) > 0 {
		return nil, skipped, fmt.Errorf("%w: %w", ErrNoCheckpoint, SkippedError(skipped))
	}
	return nil, skipped, ErrNoCheckpoint
}

// SkippedError is one error naming every checkpoint in skipped and why it
// failed verification (nil when skipped is empty). It wraps each reason,
// so errors.Is(err, ErrCorrupt) holds.
func SkippedError(skipped []Skipped) error {
	if len(skipped) == 0 {
		return nil
	}
	errs := make([]error, len(skipped))
	for i, k := range skipped {
		errs[i] = fmt.Errorf("checkpoint %d: %w", k.ID, k.Err)
	}
	return &skippedError{n: len(skipped), errs: errs}
}

type skippedError struct {
	n    int
	errs []error
}

func (e *skippedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d skipped", e.n)
	for _, err := range e.errs {
		b.WriteString("; ")
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *skippedError) Unwrap() []error { return e.errs }

// getFile reads name of a checkpoint: a missing blob is a failed
// verification (ErrCorrupt), any other failure the Store's error.
func getFile(ctx context.Context, s Store, name, what string) ([]byte, error) {
	b, err := s.Get(ctx, name)
	switch {
	case err == nil:
		return b, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
	}
	return nil, err
}

// ReadManifest reads and decodes checkpoint id's manifest alone, without
// its files (Read verifies those): a missing or damaged manifest wraps
// ErrCorrupt, any other Store error is returned as it is.
func ReadManifest(ctx context.Context, s Store, id uint64) (Manifest, error) {
	mb, err := getFile(ctx, s, Prefix(id)+manifestName, "manifest")
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := m.UnmarshalBinary(mb); err != nil {
		return Manifest{}, err
	}
	if m.ID != id {
		return Manifest{}, fmt.Errorf("%w: manifest of checkpoint %d in folder %d", ErrCorrupt, m.ID, id)
	}
	return m, nil
}

// Read reads checkpoint id and verifies its manifest and files; a failed
// verification (a damaged or missing manifest or file) wraps ErrCorrupt,
// any other Store error is returned as it is.
func Read(ctx context.Context, s Store, id uint64) (*Checkpoint, error) {
	m, err := ReadManifest(ctx, s, id)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Manifest: m}
	c.files = make(map[string][]byte, len(c.Files))
	for _, f := range c.Files {
		b, err := getFile(ctx, s, Prefix(id)+f.Name, "file "+f.Name)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != f.Size || Checksum(b) != f.CRC {
			return nil, fmt.Errorf("%w: file %s: %d bytes, checksum %08x, want %d bytes, %08x", ErrCorrupt, f.Name, len(b), Checksum(b), f.Size, f.CRC)
		}
		c.files[f.Name] = b
	}
	return c, nil
}

// Retain deletes every checkpoint of s but the newest keep complete ones
// (keep >= 1): older complete ones, and incomplete ones (files without a
// manifest) older than the newest complete one. Incomplete checkpoints
// newer than it may be in progress and are kept.
func Retain(ctx context.Context, s Store, keep int) error {
	if keep < 1 {
		return fmt.Errorf("%w: keep = %d, want >= 1", ErrInvalidParameter, keep)
	}
	ids, err := IDs(ctx, s)
	if err != nil || len(ids) == 0 {
		return err
	}
	kept := make(map[uint64]bool, keep)
	for _, id := range ids[:min(keep, len(ids))] {
		kept[id] = true
	}
	newest := ids[0]
	names, err := s.List(ctx, "")
	if err != nil {
		return err
	}
	// Manifests go first: a checkpoint whose manifest is gone is never
	// read again, whatever happens to the deletion of its files.
	slices.SortStableFunc(names, func(a, b string) int {
		am, bm := strings.HasSuffix(a, "/"+manifestName), strings.HasSuffix(b, "/"+manifestName)
		switch {
		case am && !bm:
			return -1
		case bm && !am:
			return 1
		}
		return 0
	})
	for _, n := range names {
		id, ok := parseID(n)
		if !ok || kept[id] || id > newest {
			continue
		}
		if err := s.Delete(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// Clear deletes every checkpoint of s, complete or not (manifests first,
// so that a Clear cut short leaves no complete checkpoint with missing
// files); names that are no checkpoint's are left. It is the way to start
// a job afresh over a store that holds another run's checkpoints.
func Clear(ctx context.Context, s Store) error {
	names, err := s.List(ctx, "")
	if err != nil {
		return err
	}
	var rest []string
	for _, n := range names {
		id, ok := parseID(n)
		switch {
		case !ok:
		case n == Prefix(id)+manifestName:
			if err := s.Delete(ctx, n); err != nil {
				return err
			}
		default:
			rest = append(rest, n)
		}
	}
	for _, n := range rest {
		if err := s.Delete(ctx, n); err != nil {
			return err
		}
	}
	return nil
}
