package kafka

import (
	"sync"
	"sync/atomic"
)

// firstFailure keeps the first failure that stops a Worker or a Merge and
// wakes the stage's poll when it is kept. A produce fails in the client's
// promise, on a goroutine of the client's, while the poll loop may be
// waiting a whole commit interval for records: without the wake-up a
// stage whose input had ended would not see its failure until then. The
// zero value is ready to use and safe for concurrent use.
type firstFailure struct {
	err  atomic.Pointer[error]
	once sync.Once
	done chan struct{}
}

// set keeps err unless a failure is kept already.
func (f *firstFailure) set(err error) bool {
	if f.err.CompareAndSwap(nil, &err) {
		close(f.ch())
		return true
	}
	return false
}

// get returns the failure kept, or nil.
func (f *firstFailure) get() error {
	if e := f.err.Load(); e != nil {
		return *e
	}
	return nil
}

// kept returns a channel closed once a failure is kept.
func (f *firstFailure) kept() <-chan struct{} { return f.ch() }

func (f *firstFailure) ch() chan struct{} {
	f.once.Do(func() { f.done = make(chan struct{}) })
	return f.done
}
