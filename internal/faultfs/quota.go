package faultfs

import (
	"os"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Quota is a vfs.FS over another (the OS's, at the same paths) that
// counts the bytes written through it and answers a write that would pass
// its limit with ENOSPC, writing nothing. Removing a file through it (its
// last link) gives its bytes back; files removed by other means, and
// preallocations, are not counted. Files opened through it report no file
// descriptor, so that every byte goes through Write.
type Quota struct {
	vfs.FS
	limit atomic.Int64
	used  atomic.Int64
	full  atomic.Int64 // writes refused
}

// NewQuota returns a Quota over fs with room for limit bytes.
func NewQuota(fs vfs.FS, limit int64) *Quota {
	q := &Quota{FS: fs}
	q.limit.Store(limit)
	return q
}

// Used returns the bytes counted against the limit.
func (q *Quota) Used() int64 { return q.used.Load() }

// Refused returns how many writes answered ENOSPC.
func (q *Quota) Refused() int64 { return q.full.Load() }

// SetLimit changes the limit (room freed or taken by another user of the
// disk).
func (q *Quota) SetLimit(n int64) { q.limit.Store(n) }

// take counts n bytes, or refuses them when they do not fit.
func (q *Quota) take(name string, n int) error {
	for {
		u := q.used.Load()
		if u+int64(n) > q.limit.Load() {
			q.full.Add(1)
			return &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
		}
		if q.used.CompareAndSwap(u, u+int64(n)) {
			return nil
		}
	}
}

// Create implements vfs.FS.
func (q *Quota) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := q.FS.Create(name, c)
	return q.wrap(name, f, err)
}

// OpenReadWrite implements vfs.FS.
func (q *Quota) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := q.FS.OpenReadWrite(name, c, opts...)
	return q.wrap(name, f, err)
}

// ReuseForWrite implements vfs.FS.
func (q *Quota) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := q.FS.ReuseForWrite(oldname, newname, c)
	return q.wrap(newname, f, err)
}

// Remove implements vfs.FS: a file's last link gives its bytes back.
func (q *Quota) Remove(name string) error {
	fi, statErr := os.Lstat(name)
	if err := q.FS.Remove(name); err != nil {
		return err
	}
	if statErr == nil && fi.Mode().IsRegular() && links(fi) <= 1 {
		q.used.Add(-fi.Size())
	}
	return nil
}

func (q *Quota) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &file{File: f, q: q, name: name}, nil
}

type file struct {
	vfs.File
	q    *Quota
	name string
}

func (f *file) Write(p []byte) (int, error) {
	if err := f.q.take(f.name, len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.q.take(f.name, len(p)); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *file) Fd() uintptr { return vfs.InvalidFd }
