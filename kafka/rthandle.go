package kafka

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/wire"
)

// handleVersion is the first byte of a TopicSink transaction handle.
const handleVersion = 1

// txnHandle names one pre-committed transaction of a TopicSink worker:
// its sequence (from 1; the transactional ID's slot is seq mod txnSlots)
// and the producer ID and epoch that wrote it, which an EndTxn needs.
type txnHandle struct {
	seq   uint64
	pid   int64
	epoch int16
}

// appendTxnHandle appends h: the version, then the sequence, the producer
// ID and the epoch as uvarints.
func appendTxnHandle(dst []byte, h txnHandle) []byte {
	dst = append(dst, handleVersion)
	dst = wire.AppendUvarint(dst, h.seq)
	dst = wire.AppendUvarint(dst, uint64(h.pid))
	return wire.AppendUvarint(dst, uint64(h.epoch))
}

// decodeTxnHandle decodes appendTxnHandle's bytes strictly.
func decodeTxnHandle(b []byte) (txnHandle, error) {
	r := wire.NewReader(b)
	if v := r.Byte("version"); r.Err() == nil && v != handleVersion {
		return txnHandle{}, fmt.Errorf("%w: transaction handle version %d, want %d", ErrVersion, v, handleVersion)
	}
	seq := r.Uvarint("sequence")
	pid := r.Uvarint("producer ID")
	epoch := r.Uvarint("producer epoch")
	if err := r.Done(); err != nil {
		return txnHandle{}, fmt.Errorf("%w: transaction handle: %w", ErrCorrupt, err)
	}
	if seq == 0 || pid > 1<<63-1 || epoch > 1<<15-1 {
		return txnHandle{}, corrupt("transaction handle: sequence %d, producer ID %d, epoch %d", seq, pid, epoch)
	}
	return txnHandle{seq: seq, pid: int64(pid), epoch: int16(epoch)}, nil
}
