package stream

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// TestHashesAgreeWithSketch: a key hashed here and the same key hashed by
// the sketch package are one key.
func TestHashesAgreeWithSketch(t *testing.T) {
	for _, s := range []string{"", "a", "user-42", "Les Misérables"} {
		require.Equal(t, sketch.HashString(s), HashString(s))
		require.Equal(t, sketch.Hash([]byte(s)), HashBytes([]byte(s)))
	}
	for _, x := range []uint64{0, 1, 2, 1 << 63, 1<<64 - 1} {
		require.Equal(t, sketch.HashUint64(x), HashUint64(x))
	}
}

type user struct {
	Name string
	ID   uint64
}

// TestKeyFunctions: StringKey, BytesKey and Uint64Key hash the field their
// extractor returns.
func TestKeyFunctions(t *testing.T) {
	u := user{Name: "ann", ID: 7}
	require.Equal(t, HashString("ann"), StringKey(func(u user) string { return u.Name })(u))
	require.Equal(t, HashBytes([]byte("ann")), BytesKey(func(u user) []byte { return []byte(u.Name) })(u))
	require.Equal(t, HashUint64(7), Uint64Key(func(u user) uint64 { return u.ID })(u))
	require.NotEqual(t, uint64(7), Uint64Key(func(u user) uint64 { return u.ID })(u), "integer ids are spread, not taken as hashes")
}

// TestSlice: Fill copies in order, returns fewer only at the end and 0
// after it; Reset rewinds; FromKeys and FromRecords are Streams.
func TestSlice(t *testing.T) {
	s := FromSlice([]int{1, 2, 3, 4, 5})
	buf := make([]int, 2)
	var got []int
	for n := s.Fill(buf); ; n = s.Fill(buf) {
		got = append(got, buf[:n]...)
		if n < len(buf) {
			break
		}
	}
	require.Equal(t, []int{1, 2, 3, 4, 5}, got)
	require.Zero(t, s.Fill(buf))
	s.Reset()
	require.Equal(t, 2, s.Fill(buf))
	require.Equal(t, 5, s.Len())

	var st Stream = FromKeys([]uint64{9, 8})
	recs := make([]Record, 4)
	require.Equal(t, 2, st.Fill(recs))
	require.Equal(t, []Record{{Key: 9}, {Key: 8}}, recs[:2])
	var f Filler[Record] = FromRecords([]Record{{Key: 1, Time: 2}})
	require.Equal(t, 1, f.Fill(recs))
}

type failing struct{ err error }

func (f failing) Fill([]Record) int { return 0 }
func (f failing) Err() error        { return f.err }

// TestErr: Err reports what ended a stream that can fail, nil otherwise.
func TestErr(t *testing.T) {
	boom := errors.New("boom")
	require.ErrorIs(t, Err(failing{boom}), boom)
	require.NoError(t, Err(failing{}))
	require.NoError(t, Err(FromKeys(nil)))
}

// TestSlicePosition: a slice resumes where its position was taken, and a
// position it cannot hold is refused, leaving it unchanged.
func TestSlicePosition(t *testing.T) {
	s := FromSlice([]int{1, 2, 3, 4, 5})
	buf := make([]int, 2)
	s.Fill(buf)
	pos, err := s.AppendPosition(nil)
	require.NoError(t, err)
	s.Fill(buf)
	require.NoError(t, s.Seek(pos))
	require.Equal(t, 2, s.Fill(buf))
	require.Equal(t, []int{3, 4}, buf)
	for _, bad := range [][]byte{nil, {0x80}, {6}, {1, 0}} {
		require.ErrorIs(t, s.Seek(bad), ErrPosition, "%x", bad)
	}
	require.Equal(t, 1, s.Fill(buf), "a refused Seek leaves the position")
}

func FuzzSliceSeek(f *testing.F) {
	f.Add([]byte{3})
	f.Add([]byte{0x80, 0x01})
	f.Fuzz(func(t *testing.T, pos []byte) {
		s := FromSlice(make([]int, 100))
		if err := s.Seek(pos); err != nil {
			require.ErrorIs(t, err, ErrPosition)
			require.Equal(t, 0, s.pos)
			return
		}
		again, err := s.AppendPosition(nil)
		require.NoError(t, err)
		require.Equal(t, pos, again, "a position Seek takes is canonical")
	})
}
