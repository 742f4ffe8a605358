package kafka

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
)

// TestMurmur2KafkaVectors pins Murmur2 to the values Kafka's own
// UtilsTest.testMurmur2 publishes for Utils.murmur2 (a Java int).
func TestMurmur2KafkaVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	} {
		require.Equal(t, c.want, int32(Murmur2([]byte(c.in))), "murmur2(%q)", c.in)
	}
}

// TestMurmur2AsFranzGo places keys of every length from 0 to 64 bytes, and
// a Zipf stream's 8-byte keys, over 1 to 4096 partitions as franz-go's
// Kafka-compatible default (kgo.StickyKeyPartitioner(nil), murmur2 under
// KafkaHasher) places them, through the murmur2 kind of NewPartitioner.
func TestMurmur2AsFranzGo(t *testing.T) {
	ours, err := NewPartitioner(Murmur2Kind, PartitionerOpt{})
	require.NoError(t, err)
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	tp := ours.ForTopic("t")
	var keys [][]byte
	for n := range 65 {
		k := make([]byte, n)
		for i := range k {
			k[i] = byte(31*n + 7*i + 0x80) // high bytes: sign extension would show
		}
		keys = append(keys, k)
	}
	for _, r := range testkit.ZipfRecords(9, 2000, 1.2, 1000, 0, 0) {
		keys = append(keys, keyed(r.Key).Key)
	}
	for _, n := range []int{1, 2, 3, 12, 100, 4096} {
		for _, k := range keys {
			r := &kgo.Record{Key: k}
			want := theirs.Partition(r, n)
			require.Equal(t, want, tp.Partition(r, n), "key %x over %d", k, n)
			require.Equal(t, want, Murmur2Partition(k, n), "key %x over %d", k, n)
		}
	}
	// A keyless record stays where it is put, as for the other kinds.
	require.Equal(t, 5, tp.Partition(&kgo.Record{Partition: 5}, 12))
}

func TestMurmur2Options(t *testing.T) {
	_, err := NewPartitioner(Murmur2Kind, PartitionerOpt{Buffered: true})
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestMurmur2Allocs(t *testing.T) {
	k := []byte("user-42")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = Murmur2Partition(k, 12) }))
}

func ExampleMurmur2Partition() {
	// Where a Java producer's default partitioner puts key "user-42" in a
	// topic of 12 partitions.
	fmt.Println(Murmur2Partition([]byte("user-42"), 12))
	// Output: 4
}
