package pebblestate

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// ErrInvalidParameter reports an argument outside its domain; the message
// names the parameter.
var ErrInvalidParameter = errors.New("pebblestate: invalid parameter")

// ErrNoSnapshot reports a snapshot reference that names no snapshot kept
// under the backend's directory (deleted by retention, or another
// directory's).
var ErrNoSnapshot = errors.New("pebblestate: no such snapshot")

// DefaultKeep is how many snapshots in complete checkpoints a Backend
// keeps of each worker.
const DefaultKeep = 3

// Option configures a Backend.
type Option func(*config)

type config struct {
	keep     int
	memtable uint64
	cache    int64
	ballast  int64
	fs       vfs.FS
	// ballastSet: the Ballast option was given (else stopWrites
	// memtables).
	ballastSet bool
}

// stopWrites is the number of memtables a database holds before writes
// wait for a flush (Pebble's MemTableStopWritesThreshold).
const stopWrites = 2

// Keep sets how many snapshots of each worker that are in complete
// checkpoints are kept, besides any newer one a checkpoint in flight may
// hold (default DefaultKeep; at least 1). Snapshots of checkpoints that
// never completed do not count.
func Keep(n int) Option { return func(c *config) { c.keep = n } }

// MemTableSize sets each database's memtable size in bytes (default 64
// MiB; at least 1 MiB).
func MemTableSize(n uint64) Option { return func(c *config) { c.memtable = n } }

// CacheSize sets each database's block cache in bytes (default 8 MiB; at
// least 0).
func CacheSize(n int64) Option { return func(c *config) { c.cache = n } }

// Ballast sets the bytes each worker's directory reserves for a full disk
// (default: twice MemTableSize, what the memtables a write can wait on
// flush to; 0 reserves nothing). When a write of the worker's database
// finds the disk full, the ballast is deleted so that the flushes Pebble
// has begun can finish, and the store fails at its next Commit or
// Snapshot with ErrDiskFull instead of waiting for room forever. Open
// fails with ErrDiskFull up front when the directory cannot hold it.
// Without a ballast a full disk still fails the store, but a write
// already waiting on a flush that cannot finish waits for room.
func Ballast(n int64) Option { return func(c *config) { c.ballast, c.ballastSet = n, true } }

// FS sets the filesystem Pebble reads and writes its databases through
// (default vfs.Default): a wrapper of the OS's filesystem at the same
// paths, such as one that injects faults or limits space. Snapshot
// references, markers and links are made with the os package.
func FS(fs vfs.FS) Option { return func(c *config) { c.fs = fs } }

// Backend is an operators.StateBackend whose stores are Pebble databases
// under one directory. It is safe for concurrent use; Close it when the
// jobs that use it have ended.
type Backend struct {
	dir    string
	cfg    config
	mu     sync.Mutex
	stores map[string][]*Store // by stage and worker, oldest first
	closed bool
}

// Open returns a Backend keeping its databases and snapshots under dir,
// which must be an existing, writable directory.
func Open(dir string, opts ...Option) (*Backend, error) {
	cfg := config{keep: DefaultKeep, memtable: 64 << 20, cache: 8 << 20, fs: vfs.Default}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.ballastSet {
		cfg.ballast = stopWrites * int64(min(cfg.memtable, 1<<40))
	}
	switch {
	case cfg.keep < 1:
		return nil, fmt.Errorf("%w: Keep = %d, want >= 1", ErrInvalidParameter, cfg.keep)
	case cfg.memtable < 1<<20:
		return nil, fmt.Errorf("%w: MemTableSize = %d, want >= 1 MiB", ErrInvalidParameter, cfg.memtable)
	case cfg.cache < 0:
		return nil, fmt.Errorf("%w: CacheSize = %d, want >= 0", ErrInvalidParameter, cfg.cache)
	case cfg.ballast < 0:
		return nil, fmt.Errorf("%w: Ballast = %d, want >= 0", ErrInvalidParameter, cfg.ballast)
	case cfg.fs == nil:
		return nil, fmt.Errorf("%w: FS is nil, want a filesystem", ErrInvalidParameter)
	case dir == "":
		return nil, fmt.Errorf("%w: dir is empty, want a directory", ErrInvalidParameter)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: dir %q: %w", ErrInvalidParameter, dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: dir %q is not a directory", ErrInvalidParameter, dir)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return nil, fmt.Errorf("%w: dir %q is not writable: %w", ErrInvalidParameter, dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return nil, fmt.Errorf("%w: dir %q: %w", ErrInvalidParameter, dir, err)
	}
	return &Backend{dir: dir, cfg: cfg, stores: make(map[string][]*Store)}, nil
}

// Open implements operators.StateBackend: it returns a new, empty database
// of the stage's worker, at dir/<stage>.<worker>/db-<n> (the stage name
// escaped as a path segment). The database a previous run of the job
// opened for the worker (whose goroutine may not have returned yet) stays
// open until Close, which deletes it. Snapshots, under
// dir/<stage>.<worker>/snap, are shared by the worker's databases.
func (b *Backend) Open(stage string, worker int) (operators.KVStore, error) {
	if worker < 0 {
		return nil, fmt.Errorf("%w: worker = %d, want >= 0", ErrInvalidParameter, worker)
	}
	name := url.PathEscape(stage) + "." + strconv.Itoa(worker)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("%w: backend is closed", ErrInvalidParameter)
	}
	s := &Store{dir: filepath.Join(b.dir, name), gen: len(b.stores[name]), cfg: b.cfg, fault: newFault()}
	if err := os.MkdirAll(s.snapDir(), 0o755); err != nil {
		return nil, err
	}
	if err := reserveBallast(b.cfg.fs, s.dir, b.cfg.ballast); err != nil {
		return nil, err
	}
	if err := s.scanSnapshots(); err != nil {
		return nil, err
	}
	if err := s.reopen("", nil); err != nil {
		return nil, err
	}
	b.stores[name] = append(b.stores[name], s)
	return s, nil
}

// Close closes every database. Snapshots stay on disk.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	var errs []error
	for name, ss := range b.stores {
		for i, s := range ss {
			errs = append(errs, s.close())
			if i < len(ss)-1 {
				errs = append(errs, os.RemoveAll(s.dbDir()))
			}
		}
		delete(b.stores, name)
	}
	return errors.Join(errs...)
}

// Store is one worker's Pebble database: an operators.KVStore. It is used
// by one goroutine.
type Store struct {
	dir   string
	gen   int // the Open of the worker it came from: its database directory
	cfg   config
	db    *pebble.DB
	batch *pebble.Batch
	merge atomic.Pointer[operators.MergeFunc]
	// fault is the first error that failed the store (a full disk, a
	// background write); once the worker sees it, db is closed and nil.
	fault *fault
	// mu guards snaps and done: Completed runs on the checkpoint
	// coordinator's goroutine.
	mu    sync.Mutex
	snaps []uint64        // kept snapshots, oldest first
	done  map[uint64]bool // snapshots in complete checkpoints (marker files)
	// sums caches the sizes and checksums of the lineage's sstables, by
	// name: a database reopened from a snapshot may reuse a number with
	// other content, so Restore clears it.
	sums map[string]snapFile
}

func (s *Store) dbDir() string   { return filepath.Join(s.dir, "db-"+strconv.Itoa(s.gen)) }
func (s *Store) snapDir() string { return filepath.Join(s.dir, "snap") }

// doneSuffix names a snapshot's completion marker, "<n>.done" beside the
// snapshot's directory "<n>".
const doneSuffix = ".done"

func (s *Store) scanSnapshots() error {
	ents, err := os.ReadDir(s.snapDir())
	if err != nil {
		return err
	}
	s.done = make(map[uint64]bool)
	for _, e := range ents {
		if n, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && e.IsDir() {
			s.snaps = append(s.snaps, n)
		}
		if num, ok := strings.CutSuffix(e.Name(), doneSuffix); ok {
			if n, err := strconv.ParseUint(num, 10, 64); err == nil {
				s.done[n] = true
			}
		}
	}
	slices.Sort(s.snaps)
	return nil
}

// Completed implements operators.SnapshotCompleter: the snapshot ref is in
// a complete checkpoint. It records that durably (a marker file beside the
// snapshot) and deletes the snapshots no complete checkpoint can need: all
// but the newest Keep completed ones, except those newer than ref (which
// a checkpoint in flight may hold).
func (s *Store) Completed(ref []byte) error {
	r, err := decodeRef(ref)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.markDone(r.n)
}

// markDone marks snapshot n completed and prunes; s.mu is held.
func (s *Store) markDone(n uint64) error {
	if !s.done[n] {
		f, err := os.Create(s.snapPath(n) + doneSuffix)
		if err != nil {
			return err
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			return err
		}
		if err := checkpoint.SyncDir(s.snapDir()); err != nil {
			return err
		}
		s.done[n] = true
	}
	kept := 0
	var keep []uint64
	for i := len(s.snaps) - 1; i >= 0; i-- {
		m := s.snaps[i]
		switch {
		case m > n:
		case s.done[m] && kept < s.cfg.keep:
			kept++
		default:
			if err := os.RemoveAll(s.snapPath(m)); err != nil {
				return err
			}
			if err := os.Remove(s.snapPath(m) + doneSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			delete(s.done, m)
			continue
		}
		keep = append(keep, m)
	}
	slices.Reverse(keep)
	s.snaps = keep
	return nil
}

// reopen closes the database, replaces its directory with the files of
// the snapshot directory from (empty when from is ""), and opens it.
func (s *Store) reopen(from string, files []snapFile) error {
	if err := s.close(); err != nil {
		return err
	}
	if err := os.RemoveAll(s.dbDir()); err != nil {
		return err
	}
	if from != "" {
		if err := linkTree(from, s.dbDir(), files); err != nil {
			return err
		}
	}
	opts := &pebble.Options{
		DisableWAL:                  true,
		MemTableSize:                s.cfg.memtable,
		CacheSize:                   s.cfg.cache,
		Logger:                      logger{s},
		FS:                          s.fs(),
		EventListener:               s.listener(),
		MemTableStopWritesThreshold: stopWrites,
		Merger:                      &pebble.Merger{Name: "skewer.accumulator", Merge: s.newValueMerger},
	}
	db, err := pebble.Open(s.dbDir(), opts)
	if err != nil {
		return err
	}
	s.db, s.batch = db, db.NewBatch()
	return nil
}

func (s *Store) close() error {
	if s.db == nil {
		return nil
	}
	err := errors.Join(s.batch.Close(), s.db.Close())
	s.db, s.batch = nil, nil
	return err
}

// SetMerge implements operators.KVStore: f becomes the database's merge
// operator, which Pebble calls when it reads or compacts a key's operands.
func (s *Store) SetMerge(f operators.MergeFunc) { s.merge.Store(&f) }

// Merge implements operators.KVStore.
func (s *Store) Merge(key, operand []byte) error { return s.batch.Merge(key, operand, nil) }

// newValueMerger is the database's pebble.Merge: it folds a key's operands
// with the MergeFunc SetMerge set, two buffers alternating. Mergers are
// pooled: Pebble closes the one whose result it no longer needs (a read
// resolves every key through one, even a key of one operand).
func (s *Store) newValueMerger(_, value []byte) (pebble.ValueMerger, error) {
	f := s.merge.Load()
	if f == nil {
		return nil, errNoMerge
	}
	m := mergers.Get().(*valueMerger)
	m.f, m.cur = *f, append(m.cur[:0], value...)
	return m, nil
}

var mergers = sync.Pool{New: func() any { return new(valueMerger) }}

var errNoMerge = errors.New("pebblestate: merge operand before SetMerge")

type valueMerger struct {
	f          operators.MergeFunc
	cur, spare []byte
}

func (m *valueMerger) MergeNewer(v []byte) error { return m.fold(m.cur, v) }
func (m *valueMerger) MergeOlder(v []byte) error { return m.fold(v, m.cur) }

func (m *valueMerger) fold(older, newer []byte) error {
	out, err := m.f(m.spare[:0], older, newer)
	if err != nil {
		return err
	}
	m.spare, m.cur = m.cur, out
	return nil
}

func (m *valueMerger) Finish(bool) ([]byte, io.Closer, error) { return m.cur, m, nil }

// Close returns m to the pool once Pebble is done with Finish's result.
func (m *valueMerger) Close() error {
	m.f = nil
	mergers.Put(m)
	return nil
}

// Get implements operators.KVStore: a point read, the key's operands
// merged.
func (s *Store) Get(dst, key []byte) ([]byte, bool, error) {
	if s.db == nil {
		return dst, false, s.unusable()
	}
	v, c, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, false, nil
	}
	if err != nil {
		return dst, false, s.readErr(err)
	}
	dst = append(dst, v...)
	return dst, true, c.Close()
}

// Commit implements operators.KVStore; the write is not synced (durability
// comes from snapshots). A store whose disk filled, or whose background
// writes failed, refuses it (ErrDiskFull, ErrStoreFailed).
func (s *Store) Commit() error {
	if err := s.failed(); err != nil {
		return err
	}
	if s.batch.Empty() {
		return nil
	}
	err := s.batch.Commit(pebble.NoSync)
	s.batch.Reset()
	return err
}

// Scan implements operators.KVStore. The iterator is closed however f
// returns (a panic in f included: a worker that fails mid-firing must not
// keep the database from closing).
func (s *Store) Scan(prefix []byte, f func(key, val []byte) error) (err error) {
	if s.db == nil {
		return s.unusable()
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer func() { err = s.readErr(errors.Join(err, it.Close())) }()
	for it.First(); it.Valid(); it.Next() {
		if err := f(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// DeletePrefix implements operators.KVStore.
func (s *Store) DeletePrefix(prefix []byte) error {
	if s.db == nil {
		return s.unusable()
	}
	return s.db.DeleteRange(prefix, prefixEnd(prefix), pebble.NoSync)
}

// prefixEnd is the smallest key above every key with the prefix (nil when
// there is none).
func prefixEnd(prefix []byte) []byte {
	end := slices.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i]++; end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Snapshot implements operators.KVStore: it flushes the memtable and makes
// a Pebble checkpoint (hard links to the sstables) named by the next
// number. The reference is the snapshot's number and its files. The
// flush ends when Pebble's does or when the store fails (ErrDiskFull,
// ErrStoreFailed), whichever comes first.
func (s *Store) Snapshot() ([]byte, error) {
	if err := s.Commit(); err != nil {
		return nil, err
	}
	flushed, err := s.db.AsyncFlush()
	if err != nil {
		return nil, err
	}
	select {
	case <-flushed:
	case <-s.fault.ch:
	}
	if err := s.failed(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	n := uint64(1)
	if len(s.snaps) > 0 {
		n = s.snaps[len(s.snaps)-1] + 1
	}
	s.mu.Unlock()
	if err := s.db.Checkpoint(s.snapPath(n)); err != nil {
		return nil, err
	}
	if s.sums == nil {
		s.sums = make(map[string]snapFile)
	}
	files, err := describe(s.snapPath(n), s.sums)
	if err != nil {
		return nil, err
	}
	// A fault during the checkpoint may have cut a file short before the
	// retry on the ballast's room: such a snapshot is not handed out.
	if err := s.failed(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.snaps = append(s.snaps, n)
	s.mu.Unlock()
	return appendRef(nil, snapRef{n: n, files: files}), nil
}

func (s *Store) snapPath(n uint64) string {
	return filepath.Join(s.snapDir(), strconv.FormatUint(n, 10))
}

// Restore implements operators.KVStore: it replaces the database with the
// snapshot ref names (hard links again), or empties it when ref is nil.
// Every file the reference lists is verified first (present, its size and
// CRC-32C): a reference that does not decode, or a snapshot that does
// not match it, is an error wrapping ErrCorruptSnapshot, and a ref that
// names no kept snapshot one wrapping ErrNoSnapshot; both leave the
// database as it was.
func (s *Store) Restore(ref []byte) error {
	if err := s.fault.get(); err != nil {
		s.failed()
		return err
	}
	s.sums = nil
	if ref == nil {
		return s.reopen("", nil)
	}
	r, err := decodeRef(ref)
	if err != nil {
		return err
	}
	s.mu.Lock()
	kept := slices.Contains(s.snaps, r.n)
	s.mu.Unlock()
	if !kept {
		return fmt.Errorf("%w: %d under %s", ErrNoSnapshot, r.n, s.snapDir())
	}
	if err := verify(s.snapPath(r.n), r); err != nil {
		return err
	}
	// A checkpoint restored is complete, marked or not (the process may
	// have stopped between its manifest and the marker).
	s.mu.Lock()
	err = s.markDone(r.n)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.reopen(s.snapPath(r.n), r.files)
}

// linkTree makes dst a copy of files of the Pebble directory src:
// sstables (never modified once written) are hard-linked, the other files
// (manifest, options, which Pebble appends to) copied.
func linkTree(src, dst string, files []snapFile) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		from, to := filepath.Join(src, f.name), filepath.Join(dst, f.name)
		if strings.HasSuffix(f.name, ".sst") {
			if err := os.Link(from, to); err == nil {
				continue
			}
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	r, err := os.Open(from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// logger is a store's Pebble logger: informational and error messages
// are dropped (errors reach the caller through return values, background
// ones through the store's fault). A fatal one fails the store: one whose
// cause is a full disk (a manifest write Pebble then abandons, returning
// its error) returns; any other panics with a one-line message, as Pebble
// requires Fatalf not to return.
type logger struct{ s *Store }

func (logger) Infof(string, ...any)  {}
func (logger) Errorf(string, ...any) {}

func (l logger) Fatalf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	for _, v := range a {
		if err, ok := v.(error); ok && errors.Is(err, syscall.ENOSPC) {
			l.s.fault.set(fmt.Errorf("%w: %s: %s", ErrDiskFull, l.s.dir, msg))
			return
		}
	}
	err := fmt.Errorf("%w: %s: %s", ErrStoreFailed, l.s.dir, msg)
	l.s.fault.set(err)
	panic(err)
}
