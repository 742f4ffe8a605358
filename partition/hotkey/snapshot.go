package hotkey

import (
	"errors"
	"fmt"
	"math"

	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/sketch"
)

// Snapshots. Every detector of this package but Fixed saves the state that
// decides its later answers (AppendState) and takes it back (RestoreState),
// so that a partitioner restored from a checkpoint routes as the original
// would have. RestoreState takes only a state saved by a detector made
// with the same parameters (kind, theta, window); otherwise, and for
// damaged bytes, it returns an error wrapping ErrCorrupt and leaves the
// detector unchanged. Encodings are versioned (snapshotVersion); a decoder
// rejects versions it does not know. AppendState appends to dst and
// allocates nothing else (a summary's encoding included), so that it can
// run on the worker's goroutine at every checkpoint. Fixed keeps no
// state and has no snapshot. A Windowed saves its summaries through
// Summary's AppendState and DecodeState, tagged by Kind.
//
// Layouts (uvarints unless said; f64 is a float64's bits, 8 bytes):
//
//	Windowed: 'W', version, summary kind, window, theta (f64), old (byte),
//	          n[old], swapped (bool), refreshes, accN (f64), heads (count,
//	          then key (8 bytes), p (f64) each; Stats follow from them),
//	          the two summaries (length-prefixed)
//	Stable:   'S', version, the Windowed (length-prefixed), ready (bool),
//	          vw (f64), candidates (count, then key (8 bytes), p (f64),
//	          head (bool) each)
//
// and the summaries: filtered 'f' (n, forwarded, the Space-Saving summary's
// encoding length-prefixed, the bucket counters packed two per byte as
// 4-bit values, 15 meaning "15 plus the next uvarint of the tail that
// follows them"), spacesaving 's' (the sketch's encoding). Package
// partitionlab's summaries use 'l', 'c' and 'e'.

// ErrCorrupt reports a detector state RestoreState cannot take: damaged,
// or saved by a detector of another kind or other parameters.
var ErrCorrupt = errors.New("hotkey: corrupt state")

// snapshotVersion is the version of every detector encoding.
const snapshotVersion = 1

func corrupt(what string, err error) error { return fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err) }

func appendF64(dst []byte, x float64) []byte { return wire.AppendU64(dst, math.Float64bits(x)) }

func readF64(r *wire.Reader, what string) float64 { return math.Float64frombits(r.U64(what)) }

// readProb reads a probability in [0, 1].
func readProb(r *wire.Reader, what string) float64 {
	p := readF64(r, what)
	if r.Err() == nil && !(p >= 0 && p <= 1) {
		r.Fail("%s = %v, want in [0, 1]", what, p)
	}
	return p
}

// readHeader reads a layout's tag and version.
func readHeader(r *wire.Reader, tag byte, what string) {
	if t := r.Byte("tag"); r.Err() == nil && t != tag {
		r.Fail("tag %q, want %q (%s)", t, tag, what)
	}
	if v := r.Byte("version"); r.Err() == nil && v != snapshotVersion {
		r.Fail("%s version %d, want %d", what, v, snapshotVersion)
	}
}

// AppendState appends the detector's state to dst.
func (w *Windowed) AppendState(dst []byte) ([]byte, error) {
	dst = append(dst, 'W', snapshotVersion, w.sum[0].Kind())
	dst = wire.AppendUvarint(dst, w.window)
	dst = appendF64(dst, w.theta)
	dst = append(dst, byte(w.old))
	dst = wire.AppendUvarint(dst, w.n[w.old])
	dst = wire.AppendBool(dst, w.swapped)
	dst = wire.AppendUvarint(dst, w.refreshes)
	dst = appendF64(dst, w.accN)
	dst = appendHeads(dst, w.heads)
	for _, s := range w.sum {
		var mark int
		var err error
		dst, mark = wire.BeginPrefixed(dst)
		if dst, err = s.AppendState(dst); err != nil {
			return dst, err
		}
		dst = wire.EndPrefixed(dst, mark)
	}
	return dst, nil
}

func appendHeads(dst []byte, heads []HeadKey) []byte {
	dst = wire.AppendUvarint(dst, uint64(len(heads)))
	for _, h := range heads {
		dst = appendF64(wire.AppendU64(dst, h.Key), h.P)
	}
	return dst
}

// readHeads reads a head list: distinct keys, probabilities in (0, 1],
// sorted ByWeight.
func readHeads(r *wire.Reader) []HeadKey {
	k := r.Count(16, "heads")
	heads := make([]HeadKey, 0, k)
	for i := range k {
		h := HeadKey{Key: r.U64("head key"), P: readProb(r, "head p")}
		if r.Err() != nil {
			return nil
		}
		if h.P == 0 || i > 0 && ByWeight(heads[i-1], h) >= 0 {
			r.Fail("head %d (%#x, %v) out of order or at probability 0", i, h.Key, h.P)
			return nil
		}
		heads = append(heads, h)
	}
	return heads
}

// RestoreState replaces the detector's state with one AppendState saved.
func (w *Windowed) RestoreState(b []byte) error {
	t, err := w.decodeState(b)
	if err != nil {
		return corrupt("windowed detector", err)
	}
	t.visit = w.visit // bound to w
	t.cands = w.cands[:0]
	*w = *t
	return nil
}

// decodeState returns a detector made like w holding the state in b.
func (w *Windowed) decodeState(b []byte) (*Windowed, error) {
	a := w.sum[0]
	r := wire.NewReader(b)
	readHeader(r, 'W', "windowed detector")
	if k := r.Byte("summary kind"); r.Err() == nil && k != a.Kind() {
		r.Fail("summary kind %q, want %q", k, a.Kind())
	}
	if win := r.Uvarint("window"); r.Err() == nil && win != w.window {
		r.Fail("window %d, want %d", win, w.window)
	}
	if th := readF64(r, "theta"); r.Err() == nil && th != w.theta {
		r.Fail("theta %v, want %v", th, w.theta)
	}
	old := r.Int(1, "old")
	nOld := r.Uvarint("n")
	swapped := r.Bool("swapped")
	refreshes := r.Uvarint("refreshes")
	accN := readF64(r, "accN")
	heads := readHeads(r)
	sums := [2][]byte{r.Bytes("summary"), r.Bytes("summary")}
	if err := r.Done(); err != nil {
		return nil, err
	}
	if nOld >= 2*w.window || swapped && nOld < w.window {
		return nil, fmt.Errorf("%w: %d tuples in the older summary (swapped %v), window %d", wire.ErrCorrupt, nOld, swapped, w.window)
	}
	if !(accN >= 0 && accN < float64(2*w.window)) {
		return nil, fmt.Errorf("%w: accN = %v", wire.ErrCorrupt, accN)
	}
	t := *w
	t.old, t.swapped, t.refreshes, t.accN = old, swapped, refreshes, accN
	t.n[old], t.n[1-old] = nOld, nOld-min(nOld, w.window)
	t.heads = make([]HeadKey, len(heads), max(len(heads), cap(w.heads)))
	copy(t.heads, heads)
	t.stats = HeadStats{Mass: headMass(heads), Count: len(heads)}
	if len(heads) > 0 {
		t.stats.P1 = heads[0].P // the largest: ByWeight
	}
	for i := range t.sum {
		s, err := a.DecodeState(sums[i], t.n[i])
		if err != nil {
			return nil, err
		}
		t.sum[i] = s
	}
	return &t, nil
}

// AppendState appends the detector's state to dst.
func (s *Stable) AppendState(dst []byte) ([]byte, error) {
	dst = append(dst, 'S', snapshotVersion)
	dst, mark := wire.BeginPrefixed(dst)
	dst, err := s.w.AppendState(dst)
	if err != nil {
		return dst, err
	}
	dst = wire.EndPrefixed(dst, mark)
	dst = wire.AppendBool(dst, s.ready)
	dst = appendF64(dst, s.vw)
	dst = wire.AppendUvarint(dst, uint64(s.cand.Len()))
	for k, e := range s.cand.All() {
		dst = appendF64(wire.AppendU64(dst, k), e.p)
		dst = wire.AppendBool(dst, e.head)
	}
	return dst, nil
}

// RestoreState replaces the detector's state with one AppendState saved.
func (s *Stable) RestoreState(b []byte) error {
	if err := s.restore(b); err != nil {
		return corrupt("stable detector", err)
	}
	return nil
}

func (s *Stable) restore(b []byte) error {
	r := wire.NewReader(b)
	readHeader(r, 'S', "stable detector")
	wb := r.Bytes("windowed detector")
	ready := r.Bool("ready")
	vw := readF64(r, "vw")
	k := r.Count(17, "candidates")
	if r.Err() == nil && k > s.limit {
		r.Fail("%d candidates, want at most %d", k, s.limit)
	}
	if r.Err() != nil {
		return r.Err()
	}
	if !(vw >= 0 && vw <= 1) {
		return fmt.Errorf("%w: vw = %v", wire.ErrCorrupt, vw)
	}
	var cand u64map.Map[stableSlot]
	cand.Init(s.limit, 0, u64map.Half)
	for range k {
		key, p, head := r.U64("key"), readProb(r, "p"), r.Bool("head")
		if r.Err() != nil {
			return r.Err()
		}
		e, added := cand.Put(key)
		if !added {
			return fmt.Errorf("%w: candidate %#x twice", wire.ErrCorrupt, key)
		}
		*e = stableSlot{p: p, head: head}
	}
	if err := r.Done(); err != nil {
		return err
	}
	w, err := s.w.decodeState(wb)
	if err != nil {
		return err
	}
	w.visit, w.cands = s.w.visit, s.w.cands[:0]
	*s.w = *w
	s.cand, s.ready, s.vw = cand, ready, vw
	s.seen, s.epoch = s.w.refreshes, 0
	clear(s.filter[:])
	for k, e := range s.cand.All() {
		if e.head {
			s.filter.Add(k)
		}
	}
	s.collectHeads()
	return nil
}

// Kind implements Summary.
func (f *filteredSummary) Kind() byte { return 'f' }

// AppendState implements Summary.
func (f *filteredSummary) AppendState(dst []byte) ([]byte, error) {
	dst = wire.AppendUvarint(dst, f.n)
	dst = wire.AppendUvarint(dst, f.forwarded)
	dst, mark := wire.BeginPrefixed(dst)
	dst, err := f.ss.AppendBinary(dst)
	if err != nil {
		return dst, err
	}
	dst = wire.EndPrefixed(dst, mark)
	return appendNibbles(dst, f.cnt), nil
}

// appendNibbles appends bucket counters two per byte, low nibble first, a
// counter of 15 or more as 15 with its excess in a uvarint after them all.
func appendNibbles(dst []byte, cnt []uint32) []byte {
	for i := 0; i < len(cnt); i += 2 {
		lo, hi := min(cnt[i], 15), uint32(0)
		if i+1 < len(cnt) {
			hi = min(cnt[i+1], 15)
		}
		dst = append(dst, byte(lo|hi<<4))
	}
	for _, c := range cnt {
		if c >= 15 {
			dst = wire.AppendUvarint(dst, uint64(c-15))
		}
	}
	return dst
}

// readNibbles reads what appendNibbles wrote into cnt.
func readNibbles(r *wire.Reader, cnt []uint32) {
	packed := r.Next((len(cnt)+1)/2, "buckets")
	if r.Err() != nil {
		return
	}
	for i := range cnt {
		cnt[i] = uint32(packed[i/2] >> (4 * (i & 1)) & 15)
	}
	if len(cnt)%2 == 1 && packed[len(packed)-1]>>4 != 0 {
		r.Fail("bucket padding is not zero")
	}
	for i, c := range cnt {
		if c == 15 {
			x := r.Uvarint("bucket excess")
			if x > math.MaxUint32-15 {
				r.Fail("bucket %d: excess %d", i, x)
			}
			cnt[i] = uint32(15 + min(x, math.MaxUint32-15))
		}
	}
}

// DecodeState implements Summary.
func (f *filteredSummary) DecodeState(b []byte, n uint64) (Summary, error) {
	r := wire.NewReader(b)
	fn := r.Uvarint("n")
	forwarded := r.Uvarint("forwarded")
	ssb := r.Bytes("space-saving summary")
	cnt := make([]uint32, len(f.cnt))
	readNibbles(r, cnt)
	if err := r.Done(); err != nil {
		return nil, err
	}
	var sum uint64
	for _, c := range cnt {
		sum += uint64(c)
	}
	if fn != n || sum != n {
		return nil, fmt.Errorf("%w: filtered summary of %d tuples, buckets summing to %d, want %d", wire.ErrCorrupt, fn, sum, n)
	}
	ss := &sketch.SpaceSaving[uint64]{}
	if err := ss.UnmarshalBinary(ssb); err != nil {
		return nil, err
	}
	if ss.Capacity() != f.ss.Capacity() || ss.N() > n {
		return nil, fmt.Errorf("%w: space-saving capacity %d (want %d), N %d of %d tuples", wire.ErrCorrupt, ss.Capacity(), f.ss.Capacity(), ss.N(), n)
	}
	t := &filteredSummary{ss: ss, top: make([]sketch.Counter[uint64], 0, cap(f.top)), cnt: cnt,
		shift: f.shift, period: f.period, n: n, forwarded: forwarded}
	t.tau = n / t.period
	t.next = (t.tau + 1) * t.period
	return t, nil
}

// Kind implements Summary.
func (s *spaceSavingSummary) Kind() byte { return 's' }

// AppendState implements Summary.
func (s *spaceSavingSummary) AppendState(dst []byte) ([]byte, error) { return s.ss.AppendBinary(dst) }

// DecodeState implements Summary.
func (s *spaceSavingSummary) DecodeState(b []byte, n uint64) (Summary, error) {
	ss := &sketch.SpaceSaving[uint64]{}
	if err := ss.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	if ss.Capacity() != s.ss.Capacity() || ss.N() != n {
		return nil, fmt.Errorf("%w: space-saving capacity %d (want %d), N %d (want %d)", wire.ErrCorrupt, ss.Capacity(), s.ss.Capacity(), ss.N(), n)
	}
	return &spaceSavingSummary{ss: ss, top: make([]sketch.Counter[uint64], 0, cap(s.top))}, nil
}
