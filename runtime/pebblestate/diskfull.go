package pebblestate

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrDiskFull reports that a store's filesystem ran out of space: when it
// was opened (too little room for its ballast) or while it ran (a write
// answered ENOSPC). A store that ran out fails at its next Commit or
// Snapshot and stays failed; the database is closed.
var ErrDiskFull = errors.New("pebblestate: disk full")

// ErrStoreFailed reports a write Pebble could not complete in the
// background (a flush or compaction that failed with another error than
// ENOSPC). Like ErrDiskFull, the store fails at its next Commit or
// Snapshot and stays failed.
var ErrStoreFailed = errors.New("pebblestate: background write failed")

// ErrCorruptData reports a database file that fails Pebble's checksums
// while the job runs (a damaged disk, a file changed under the store):
// the read that found it fails with it, and so does the store from then
// on.
var ErrCorruptData = errors.New("pebblestate: corrupt data")

// ballastName is the file each worker's directory reserves and gives up
// when its disk fills, so that the writes Pebble has begun can finish.
const ballastName = "ballast"

// fault records the first error that makes a store unusable. Pebble's
// goroutines set it (the disk-full callback, its background-error event);
// the worker reads it.
type fault struct {
	err  atomic.Pointer[error]
	once sync.Once
	ch   chan struct{} // closed once err is set
}

func newFault() *fault { return &fault{ch: make(chan struct{})} }

func (f *fault) set(err error) {
	f.once.Do(func() {
		f.err.Store(&err)
		close(f.ch)
	})
}

func (f *fault) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fs is the filesystem Pebble writes through: cfg.fs (the OS's unless the
// FS option set another) wrapped so that the first ENOSPC of a write
// gives up the worker's ballast and fails the store. The write that met
// ENOSPC is retried once (vfs.OnDiskFull), on the room the ballast left.
func (s *Store) fs() vfs.FS {
	return vfs.OnDiskFull(s.cfg.fs, func() {
		// Errors are ignored: the ballast may be gone already (another
		// database of the worker gave it up).
		_ = s.cfg.fs.Remove(s.cfg.fs.PathJoin(s.dir, ballastName))
		s.fault.set(fmt.Errorf("%w: %s", ErrDiskFull, s.dir))
	})
}

// listener fails the store on any error Pebble reports from its
// background work (a flush or compaction that will be retried at once and
// forever: the store must stop instead) and on a file that fails its
// checksums (the read that found it returns the error).
func (s *Store) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			s.fault.set(fmt.Errorf("%w: %s: %s", ErrStoreFailed, s.dir, oneLine(err)))
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			s.fault.set(fmt.Errorf("%w: %s", ErrCorruptData, info.Path))
		},
	}
}

// readErr is the error of a failed read: one that found a damaged file
// wraps ErrCorruptData.
func (s *Store) readErr(err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: %s: %s", ErrCorruptData, s.dir, oneLine(err))
	}
	return err
}

// oneLine is err's message to its first line break (Pebble's errors
// carry details on further lines).
func oneLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// failed returns the store's fault, if any, closing the database the
// first time: Pebble stops retrying its failed background work once the
// database is closed, and nothing waits on it any more. It runs on the
// worker's goroutine.
func (s *Store) failed() error {
	err := s.fault.get()
	if err == nil {
		if s.db == nil {
			return s.unusable()
		}
		return nil
	}
	if s.db != nil {
		// The database's own close error adds nothing to the fault.
		_ = s.db.Close()
		s.db = nil
	}
	return err
}

// ErrClosed reports a store used after its database was closed: its
// backend closed, or a restore that could not reopen it.
var ErrClosed = errors.New("pebblestate: store is closed")

// unusable is the error of a store without a database: its fault, else
// ErrClosed.
func (s *Store) unusable() error {
	if err := s.fault.get(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s", ErrClosed, s.dir)
}

// reserveBallast makes dir/ballast a file of n bytes (nothing when n is
// 0), written through fs: preallocated where the file is an OS file that
// supports it, zeros otherwise. A filesystem without the room is an error
// wrapping ErrDiskFull, with nothing left behind.
func reserveBallast(fs vfs.FS, dir string, n int64) error {
	if n == 0 {
		return nil
	}
	path := fs.PathJoin(dir, ballastName)
	if fi, err := fs.Stat(path); err == nil && fi.Size() >= n {
		return nil
	}
	err := writeBallast(fs, path, n)
	if err == nil {
		return nil
	}
	_ = fs.Remove(path)
	return fmt.Errorf("%w: %s cannot hold a ballast of %d bytes (the Ballast option): %w", ErrDiskFull, dir, n, err)
}

func writeBallast(fs vfs.FS, path string, n int64) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if err := allocate(f, n); err != nil {
		f.Close()
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// allocate gives f its n bytes: fallocate where f is an OS file and the
// filesystem supports it (the platform's preallocate), else zeros.
func allocate(f vfs.File, n int64) error {
	if fd := f.Fd(); fd != vfs.InvalidFd && preallocate(fd, n) == nil {
		return nil
	}
	zeros := make([]byte, 1<<20)
	for n > 0 {
		chunk := zeros[:min(n, int64(len(zeros)))]
		if _, err := f.Write(chunk); err != nil {
			return err
		}
		n -= int64(len(chunk))
	}
	return nil
}
