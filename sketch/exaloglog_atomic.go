package sketch

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

// AtomicExaLogLog is an ELL(2,24) sketch (ExaLogLog with 32-bit registers)
// that many goroutines may add to at once without a lock: AddHash updates
// its register with an atomic compare-and-swap, retrying if another
// goroutine changed the register in between. Register updates commute (a
// register after a set of update values does not depend on their order),
// so the sketch after any interleaving of adds is exactly the sequential
// sketch of the same hashes.
//
// Snapshot returns an ordinary ExaLogLog of the registers; it may run
// concurrently with AddHash, and then holds every add that returned before
// it began and possibly some that run during it. There is no martingale
// estimator (its running sum needs adds in one order): the snapshot's
// MartingaleValid is false. Only ELL(2,24) is offered, since a 28-bit
// register of ELL(2,20) may straddle two 32-bit words.
//
// The zero value is not usable: build one with NewAtomicExaLogLog. On a
// zero AtomicExaLogLog Params reports zeros and every other method panics
// with a message naming the constructor.
type AtomicExaLogLog struct {
	regs []atomic.Uint32
	mask uint64 // 2^(t+p) - 1
	p    uint8
}

// NewAtomicExaLogLog returns an empty ELL(t, d) sketch of 2^p registers
// safe for concurrent adds: t must be ExaLogLogT, d 24, and p in
// [ExaLogLogMinPrecision, ExaLogLogMaxPrecision]; otherwise it returns an
// error wrapping ErrInvalidParameter that names the parameter. It takes
// 4·2^p bytes.
func NewAtomicExaLogLog(t, d, p uint8) (*AtomicExaLogLog, error) {
	if err := ellCheckParams(t, d); err != nil {
		return nil, err
	}
	if d != 24 {
		return nil, invalidParam("d", d, "24 (32-bit registers)")
	}
	if p < ExaLogLogMinPrecision || p > ExaLogLogMaxPrecision {
		return nil, invalidParam("p", p, "2..24")
	}
	return &AtomicExaLogLog{regs: make([]atomic.Uint32, 1<<p), mask: 1<<(t+p) - 1, p: p}, nil
}

// Params returns the t, d and precision p of the sketch (zeros for a zero
// AtomicExaLogLog).
func (s *AtomicExaLogLog) Params() (t, d, p uint8) {
	if s.p == 0 {
		return 0, 0, 0
	}
	return ExaLogLogT, 24, s.p
}

// AddHash adds one hash, as ExaLogLog.AddHash does, in O(1) without
// allocating or locking; safe for concurrent use.
func (s *AtomicExaLogLog) AddHash(h uint64) {
	if s.p == 0 {
		panicZero("AtomicExaLogLog", "NewAtomicExaLogLog")
	}
	i := (h & s.mask) >> ExaLogLogT
	k := uint64(bits.LeadingZeros64(h|s.mask))<<ExaLogLogT + h&(1<<ExaLogLogT-1) + 1
	reg := &s.regs[i&uint64(len(s.regs)-1)]
	for {
		r := reg.Load()
		n := ellUpdate(uint64(r), k, 24)
		if n == uint64(r) || reg.CompareAndSwap(r, uint32(n)) {
			return
		}
	}
}

// AddString adds a key given as a string: AddHash(HashString(str)).
func (s *AtomicExaLogLog) AddString(str string) { s.AddHash(HashString(str)) }

// Snapshot returns an ExaLogLog holding the registers (see
// AtomicExaLogLog for what it holds while adds run). O(m).
func (s *AtomicExaLogLog) Snapshot() *ExaLogLog {
	if s.p == 0 {
		panicZero("AtomicExaLogLog", "NewAtomicExaLogLog")
	}
	out := newELL(ExaLogLogT, 24, s.p)
	for i := range s.regs {
		binary.LittleEndian.PutUint32(out.state[4*i:], s.regs[i].Load())
	}
	return out
}

// Estimate returns Snapshot().Estimate(): the ML estimate. O(m).
func (s *AtomicExaLogLog) Estimate() uint64 { return s.Snapshot().Estimate() }
