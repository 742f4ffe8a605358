package blobstore

import (
	"context"
	"io/fs"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/s3blob"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// fakeS3 is a Store on an in-process S3 server (gofakes3) reached over
// HTTP by the AWS SDK's client, as a real bucket is.
func fakeS3(t *testing.T) *Store {
	t.Helper()
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	require.NoError(t, backend.CreateBucket("checkpoints"))
	client := s3.New(s3.Options{
		BaseEndpoint:               aws.String(srv.URL),
		Region:                     "us-east-1",
		Credentials:                credentials.NewStaticCredentialsProvider("key", "secret", ""),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	b, err := s3blob.OpenBucket(context.Background(), client, "checkpoints", nil)
	require.NoError(t, err)
	s, err := New(b)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStoreOnS3(t *testing.T) {
	ctx := context.Background()
	s := fakeS3(t)
	_, err := s.Get(ctx, "a/b")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, s.Put(ctx, "a/b", []byte("one")))
	require.NoError(t, s.Put(ctx, "a/c", []byte("two")))
	require.NoError(t, s.Put(ctx, "z", nil))
	require.NoError(t, s.Put(ctx, "a/b", []byte("three")), "a Put replaces")
	b, err := s.Get(ctx, "a/b")
	require.NoError(t, err)
	require.Equal(t, "three", string(b))
	names, err := s.List(ctx, "a/")
	require.NoError(t, err)
	slices.Sort(names)
	require.Equal(t, []string{"a/b", "a/c"}, names)
	all, err := s.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.NoError(t, s.Delete(ctx, "a/b"))
	require.NoError(t, s.Delete(ctx, "a/b"), "deleting a missing name is not an error")
	_, err = s.Get(ctx, "a/b")
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, bad := range []string{"", "/a", "a/", "a//b", "a/../b", "./a", "a b"} {
		require.ErrorIs(t, s.Put(ctx, bad, nil), ErrInvalidParameter, bad)
	}
}

// TestCheckpointsOnS3: checkpoints written to the bucket are read back;
// one cut between its files and its manifest (a crash) is not complete,
// so the newest complete one before it is what a restore gets.
func TestCheckpointsOnS3(t *testing.T) {
	ctx := context.Background()
	s := fakeS3(t)
	write := func(id uint64, commit bool) {
		f, err := checkpoint.WriteFile(ctx, s, id, "stage/0", []byte{byte(id), 1, 2, 3})
		require.NoError(t, err)
		if commit {
			require.NoError(t, checkpoint.Commit(ctx, s, checkpoint.Manifest{ID: id, Files: []checkpoint.File{f}}))
		}
	}
	write(1, true)
	write(2, true)
	write(3, false) // the crash: files stored, the manifest not
	c, skipped, err := checkpoint.Latest(ctx, s)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.EqualValues(t, 2, c.ID)
	b, ok := c.File("stage/0")
	require.True(t, ok)
	require.Equal(t, []byte{2, 1, 2, 3}, b)
	// A damaged file is found by its checksum and the checkpoint skipped.
	require.NoError(t, s.Put(ctx, checkpoint.Prefix(2)+"stage/0", []byte{9, 9, 9, 9}))
	c, skipped, err = checkpoint.Latest(ctx, s)
	require.NoError(t, err)
	require.EqualValues(t, 1, c.ID)
	require.Len(t, skipped, 1)
	require.ErrorIs(t, skipped[0].Err, checkpoint.ErrCorrupt)
}

func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "file://"+t.TempDir())
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "x/y", []byte("z")))
	b, err := s.Get(ctx, "x/y")
	require.NoError(t, err)
	require.Equal(t, "z", string(b))
	require.NoError(t, s.Close())
	_, err = Open(ctx, "")
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = Open(ctx, "nosuch://bucket")
	require.ErrorContains(t, err, "nosuch://bucket")
	_, err = New(nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestJobRestartsFromS3: a job checkpointing into the bucket fails once
// midway and restarts from its newest checkpoint there; its counts are
// exact.
func TestJobRestartsFromS3(t *testing.T) {
	s := fakeS3(t)
	const n, keys = 20_000, 100
	recs := make([]stream.Record, n)
	for i := range recs {
		recs[i] = stream.Record{Key: uint64(i % keys), Time: int64(i)}
	}
	j, err := runtime.NewJob(runtime.Checkpoint(2*time.Millisecond, s), runtime.Restart(1, 0), runtime.BatchSize(64))
	require.NoError(t, err)
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	var seen atomic.Int64
	var failed atomic.Bool
	slow := runtime.Map(src, "slow", func(r stream.Record) stream.Record {
		// The failure comes at the first record from 3n/4 on once a
		// checkpoint is in the bucket.
		if seen.Add(1) >= 3*n/4 && !failed.Load() && j.CheckpointStats().Completed > 0 && failed.CompareAndSwap(false, true) {
			panic("the failure")
		}
		if r.Time%64 == 0 {
			time.Sleep(100 * time.Microsecond) // room for checkpoints
		}
		return r
	})
	counts := runtime.WindowAggregate(runtime.KeyBy(slow, func(r stream.Record) uint64 { return r.Key }), "count", operators.Count[stream.Record](),
		runtime.Window(operators.GlobalWindow()), runtime.Parallelism(2))
	var mu sync.Mutex
	got := map[uint64]uint64{}
	runtime.Sink(counts.Results, "sink", func(_ int, r operators.Result[uint64]) error {
		mu.Lock()
		got[r.Key] = r.Value
		mu.Unlock()
		return nil
	})
	require.NoError(t, j.Run(context.Background()))
	require.True(t, failed.Load())
	st := j.CheckpointStats()
	require.Equal(t, 1, st.Restarts)
	require.Equal(t, 1, st.Restores, "restarted from a checkpoint in the bucket")
	require.Len(t, got, keys)
	for k, v := range got {
		require.EqualValues(t, n/keys, v, "key %d", k)
	}
}
