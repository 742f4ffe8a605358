package pebblestate_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/faultfs"
	"github.com/skewerhq/skewer/runtime/pebblestate"
)

// hangGuard fails the test when f has not returned after limit: a wait on
// a full disk that never ends is the defect these tests pin, so the
// guard is a hang detector, far above any healthy run's time.
func hangGuard(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not return in %v: it waits on the full disk", what, limit)
	}
}

// TestDiskFull pins that a store whose disk fills fails with ErrDiskFull
// at a Commit or Snapshot, and its backend then closes, instead of
// waiting for room forever: on the path where a commit waits on a flush
// that cannot finish (no snapshots; the memtables fill) and on the path
// where a snapshot's flush cannot finish. The writes are random bytes
// (incompressible), 1 MiB memtables, a quota of a few of them.
func TestDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		snapEvery int // commits between snapshots; 0: none
	}{{"commits", 0}, {"snapshots", 1}, {"snapshots every 8", 8}} {
		t.Run(tc.name, func(t *testing.T) {
			quota := faultfs.NewQuota(vfs.Default, 6<<20)
			b, err := pebblestate.Open(t.TempDir(), pebblestate.MemTableSize(1<<20), pebblestate.CacheSize(0), pebblestate.FS(quota))
			require.NoError(t, err)
			kv, err := b.Open("s", 0)
			require.NoError(t, err)
			kv.SetMerge(sumUvarints)
			rng := rand.New(rand.NewPCG(1, 2))
			val := make([]byte, 200)
			var failure error
			hangGuard(t, 2*time.Minute, "writing to a full disk", func() {
				// 64 MiB of writes, ten times the quota: the disk fills long before.
				for c := 0; c < 64<<20/(200*500) && failure == nil; c++ {
					for range 500 {
						for i := range val {
							val[i] = byte(rng.Uint32())
						}
						// A uvarint the merge reads, then noise.
						val[0] = 1
						if err := kv.Merge(binary.BigEndian.AppendUint64(nil, rng.Uint64()), val); err != nil {
							failure = err
						}
					}
					if failure == nil {
						failure = kv.Commit()
					}
					if failure == nil && tc.snapEvery > 0 && c%tc.snapEvery == 0 {
						_, failure = kv.Snapshot()
					}
				}
			})
			require.ErrorIs(t, failure, pebblestate.ErrDiskFull)
			require.Positive(t, quota.Refused())
			// It stays failed.
			require.ErrorIs(t, kv.Commit(), pebblestate.ErrDiskFull)
			_, err = kv.Snapshot()
			require.ErrorIs(t, err, pebblestate.ErrDiskFull)
			_, _, err = kv.Get(nil, []byte("k"))
			require.ErrorIs(t, err, pebblestate.ErrDiskFull)
			var closeErr error
			hangGuard(t, 2*time.Minute, "Close", func() { closeErr = b.Close() })
			require.NoError(t, closeErr)
		})
	}
}

// TestBallastUpFront pins that a directory without room for a worker's
// ballast is refused when the worker's store opens, naming the option,
// and that Ballast(0) opens it (and Ballast(-1) is a bad parameter).
func TestBallastUpFront(t *testing.T) {
	quota := faultfs.NewQuota(vfs.Default, 1<<20)
	b, err := pebblestate.Open(t.TempDir(), pebblestate.MemTableSize(1<<20), pebblestate.FS(quota))
	require.NoError(t, err)
	_, err = b.Open("s", 0)
	require.ErrorIs(t, err, pebblestate.ErrDiskFull)
	require.ErrorContains(t, err, "Ballast")
	require.Zero(t, quota.Used(), "a refused ballast is not left behind")
	require.NoError(t, b.Close())

	b, err = pebblestate.Open(t.TempDir(), pebblestate.MemTableSize(1<<20), pebblestate.FS(quota), pebblestate.Ballast(0))
	require.NoError(t, err)
	_, err = b.Open("s", 0)
	require.NoError(t, err)
	require.NoError(t, b.Close())

	_, err = pebblestate.Open(t.TempDir(), pebblestate.Ballast(-1))
	require.ErrorIs(t, err, pebblestate.ErrInvalidParameter)
	require.ErrorContains(t, err, "Ballast")
	_, err = pebblestate.Open(t.TempDir(), pebblestate.FS(nil))
	require.ErrorIs(t, err, pebblestate.ErrInvalidParameter)
}
