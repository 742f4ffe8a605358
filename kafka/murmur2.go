package kafka

// Murmur2 is the 32-bit MurmurHash2 of key with Kafka's seed (0x9747b28c),
// as the Java client's Utils.murmur2 computes it (read as a signed int32,
// the value Java returns). It allocates nothing.
func Murmur2(key []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
	)
	h := seed ^ uint32(len(key))
	for ; len(key) >= 4; key = key[4:] {
		k := uint32(key[0]) | uint32(key[1])<<8 | uint32(key[2])<<16 | uint32(key[3])<<24
		k *= m
		k ^= k >> 24
		k *= m
		h = h*m ^ k
	}
	switch len(key) {
	case 3:
		h ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(key[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// Murmur2Partition is the partition Kafka's default partitioner gives a
// record with this key among n partitions (n > 0):
// toPositive(murmur2(key)) % n, where toPositive clears the sign bit. The
// Java client, librdkafka's murmur2 and murmur2_random partitioners and
// franz-go's kgo.StickyKeyPartitioner(nil) place keyed records so, which
// makes topics written by any of them co-partitioned with topics written
// through the "murmur2" kind of NewPartitioner.
func Murmur2Partition(key []byte, n int) int {
	return int(Murmur2(key)&0x7fffffff) % n
}
