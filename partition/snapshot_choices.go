package partition

import (
	"errors"
	"math"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/sketch"
)

// Snapshots of the head-aware kinds: D-Choices ('d'), W-Choices and
// RR-head ('w') and Auto ('a'), version 1 (choicesVersion). Each saves
// what decides its next routes: the loads, the tie salt, D-Choices'
// number of choices and re-solve schedule, W-Choices' sweep, Auto's mode,
// sample, random source and the D-Choices and W-Choices it routes with,
// and the detector's state. What only speeds a route up is not saved and
// starts empty (D-Choices' cursors, its lower bound on the loads): those
// are exact shortcuts, so the restored instance routes as the original.
// Layouts (uvarints unless said):
//
//	'd', version, paper (bool), loads (count, each), tie (8 bytes),
//	     D-Choices' fields, detector
//	'w', version, round-robin (bool), loads, tie (8 bytes), sweep next,
//	     sweep min, detector
//	'a', version, loads, tie (8 bytes), mode (byte), first (bool), seen,
//	     total, sample (count, 8 bytes each), random source and
//	     HyperLogLog (length-prefixed encodings), choices (count, then
//	     at, mode (byte), p1 and zipf (float64 bits), distinct each),
//	     D-Choices' fields, sweep next, sweep min, detector
//
// D-Choices' fields are d, tuples routed, the tuple of the next re-solve,
// overflows and, when neither a fixed head (hotkey.FixedHead) nor a
// detector listing its head (hotkey.HeadLister) supplies the realized
// check's keys, the head keys seen since the last re-solve (count, then
// key (8 bytes) and probability (float64 bits)). The detector is a bool,
// whether its state follows, then that state, length-prefixed: every
// detector of package hotkey but Fixed, which keeps none, has one, and so
// does a WithDetector detector that implements Snapshotter; another
// restarts as it was made.
const choicesVersion = 1

// detectorSnapshot returns a detector's Snapshotter, if it has state to
// save.
func detectorSnapshot(det Detector) (Snapshotter, bool) {
	s, ok := det.(Snapshotter)
	return s, ok
}

func appendDetector(dst []byte, det Detector) ([]byte, error) {
	s, ok := detectorSnapshot(det)
	dst = wire.AppendBool(dst, ok)
	if !ok {
		return dst, nil
	}
	dst, mark := wire.BeginPrefixed(dst)
	dst, err := s.AppendState(dst)
	if err != nil {
		return dst, err
	}
	return wire.EndPrefixed(dst, mark), nil
}

// readDetector reads a detector state for det: nil when det keeps none.
func readDetector(r *wire.Reader, det Detector) []byte {
	_, want := detectorSnapshot(det)
	if has := r.Bool("detector saved"); r.Err() == nil && has != want {
		r.Fail("detector state saved %v, the detector keeps one %v", has, want)
	}
	if !want {
		return nil
	}
	return r.Bytes("detector")
}

// restoreDetector restores det from b (read by readDetector), the last step
// of a restore: on error nothing else has changed.
func restoreDetector(det Detector, b []byte) error {
	s, ok := detectorSnapshot(det)
	if !ok {
		return nil
	}
	return s.RestoreState(b)
}

func appendF64(dst []byte, x float64) []byte { return wire.AppendU64(dst, math.Float64bits(x)) }

func readF64(r *wire.Reader, what string) float64 { return math.Float64frombits(r.U64(what)) }

func readHeader(r *wire.Reader, tag byte, what string) {
	if t := r.Byte("kind"); r.Err() == nil && t != tag {
		r.Fail("not a %s state", what)
	}
	if v := r.Byte("version"); r.Err() == nil && v != choicesVersion {
		r.Fail("%s state version %d, want %d", what, v, choicesVersion)
	}
}

// dcState is D-Choices' fields as read, before they are committed.
type dcState struct {
	d                      int
	total, next, overflows uint64
	heads                  []headKey
}

// keepsHeads reports whether the head table's keys are state: they feed
// the realized check unless a fixed head or the detector's own snapshot
// (hotkey.HeadLister) supplies them.
func (p *dChoices) keepsHeads() bool {
	_, ok := p.det.(hotkey.HeadLister)
	return !p.heads.fixed && !ok
}

func (p *dChoices) appendFields(dst []byte) []byte {
	dst = wire.AppendUvarint(dst, uint64(p.d))
	dst = wire.AppendUvarint(dst, p.total)
	dst = wire.AppendUvarint(dst, p.next)
	dst = wire.AppendUvarint(dst, p.overflows)
	if !p.keepsHeads() {
		return wire.AppendUvarint(dst, 0)
	}
	dst = wire.AppendUvarint(dst, uint64(p.heads.m.Len()))
	for k, h := range p.heads.m.All() {
		dst = appendF64(wire.AppendU64(dst, k), h.p)
	}
	return dst
}

func (p *dChoices) readFields(r *wire.Reader) dcState {
	n := len(p.load)
	st := dcState{d: r.Int(n, "d"), total: r.Uvarint("total"), next: r.Uvarint("next"), overflows: r.Uvarint("overflows")}
	if r.Err() == nil && (st.d < min(2, n) || st.next <= st.total || st.next > st.total+uint64(p.every) || st.overflows > st.total) {
		r.Fail("d %d of %d workers, tuples %d, next re-solve %d, overflows %d", st.d, n, st.total, st.next, st.overflows)
	}
	k := r.Count(16, "head keys")
	if r.Err() == nil && (k > p.heads.limit || k > 0 && !p.keepsHeads()) {
		r.Fail("%d head keys, the table holds %d", k, p.heads.limit)
	}
	seen := make(map[uint64]bool, k)
	for range k {
		h := headKey{Key: r.U64("head key"), P: readF64(r, "head p")}
		if r.Err() == nil && seen[h.Key] {
			r.Fail("head key %#x twice", h.Key)
		}
		seen[h.Key] = true
		st.heads = append(st.heads, h)
	}
	return st
}

// commitFields sets D-Choices' fields (the loads already set).
func (p *dChoices) commitFields(st dcState, tie uint64) {
	p.d, p.total, p.next, p.overflows, p.tie = st.d, st.total, st.next, st.overflows, tie
	if !p.heads.fixed {
		p.heads.clear()
		for _, h := range st.heads {
			p.heads.put(h.Key, h.P)
		}
	} else {
		for _, h := range p.heads.m.All() {
			h.d = 0 // no cursor: rescan (the cursors' bounds are of other loads)
		}
	}
	p.refreshMin()
}

func appendSweep(dst []byte, s sweep) []byte {
	return wire.AppendUvarint(wire.AppendUvarint(dst, uint64(s.next)), s.min)
}

// readSweep reads a sweep over load: its cursor a worker, its bound at
// most every load.
func readSweep(r *wire.Reader, load []uint64) sweep {
	s := sweep{next: r.Int(len(load)-1, "sweep next"), min: r.Uvarint("sweep min")}
	for _, l := range load {
		if r.Err() == nil && s.min > l {
			r.Fail("sweep min %d above a load %d", s.min, l)
		}
	}
	return s
}

// AppendState implements Snapshotter.
func (p *dChoices) AppendState(dst []byte) ([]byte, error) {
	dst = wire.AppendBool(append(dst, 'd', choicesVersion), p.paper)
	dst = appendLoads(dst, p.load)
	dst = wire.AppendU64(dst, p.tie)
	dst = p.appendFields(dst)
	return appendDetector(dst, p.det)
}

// RestoreState implements Snapshotter.
func (p *dChoices) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	readHeader(r, 'd', "dchoices")
	if paper := r.Bool("paper"); r.Err() == nil && paper != p.paper {
		r.Fail("variant paper %v, want %v", paper, p.paper)
	}
	load := readLoads(r, len(p.load))
	tie := r.U64("tie")
	st := p.readFields(r)
	det := readDetector(r, p.det)
	if err := r.Done(); err != nil {
		return corruptState("dchoices", err)
	}
	if sum := sumLoads(load); sum != st.total {
		return corruptState("dchoices", errors.New("the loads do not sum to the tuples routed"))
	}
	if err := restoreDetector(p.det, det); err != nil {
		return corruptState("dchoices", err)
	}
	copy(p.load, load)
	p.commitFields(st, tie)
	return nil
}

func sumLoads(load []uint64) uint64 {
	var s uint64
	for _, l := range load {
		s += l
	}
	return s
}

// AppendState implements Snapshotter.
func (p *headAll) AppendState(dst []byte) ([]byte, error) {
	dst = wire.AppendBool(append(dst, 'w', choicesVersion), p.roundRobin)
	dst = appendLoads(dst, p.load)
	dst = wire.AppendU64(dst, p.tie)
	dst = appendSweep(dst, p.sw)
	return appendDetector(dst, p.det)
}

// RestoreState implements Snapshotter.
func (p *headAll) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	readHeader(r, 'w', "wchoices")
	if rr := r.Bool("round-robin"); r.Err() == nil && rr != p.roundRobin {
		r.Fail("round-robin %v, want %v", rr, p.roundRobin)
	}
	load := readLoads(r, len(p.load))
	tie := r.U64("tie")
	sw := readSweep(r, load)
	det := readDetector(r, p.det)
	if err := r.Done(); err != nil {
		return corruptState("wchoices", err)
	}
	if err := restoreDetector(p.det, det); err != nil {
		return corruptState("wchoices", err)
	}
	copy(p.load, load)
	p.tie, p.sw = tie, sw
	return nil
}

// autoModes are Auto's modes by their code in a state.
var autoModes = []string{modeHash, modePKG, modeD, modeW}

func modeCode(m string) byte {
	for i, x := range autoModes {
		if x == m {
			return byte(i)
		}
	}
	return 0
}

func readMode(r *wire.Reader, what string) string {
	c := r.Int(len(autoModes)-1, what)
	return autoModes[c]
}

// AppendState implements Snapshotter.
func (a *auto) AppendState(dst []byte) ([]byte, error) {
	dst = appendLoads(append(dst, 'a', choicesVersion), a.load)
	dst = wire.AppendU64(dst, a.dc.tie)
	dst = append(dst, modeCode(a.mode))
	dst = wire.AppendBool(dst, a.first)
	dst = wire.AppendUvarint(dst, uint64(a.seen))
	dst = wire.AppendUvarint(dst, a.total)
	dst = wire.AppendUvarint(dst, uint64(len(a.sample)))
	for _, k := range a.sample {
		dst = wire.AppendU64(dst, k)
	}
	var err error
	dst, mark := wire.BeginPrefixed(dst)
	if dst, err = a.pcg.AppendBinary(dst); err != nil {
		return dst, err
	}
	dst = wire.EndPrefixed(dst, mark)
	dst, mark = wire.BeginPrefixed(dst)
	if dst, err = a.hll.AppendBinary(dst); err != nil {
		return dst, err
	}
	dst = wire.EndPrefixed(dst, mark)
	dst = wire.AppendUvarint(dst, uint64(len(a.choice)))
	for _, c := range a.choice {
		dst = append(wire.AppendUvarint(dst, c.At), modeCode(c.Kind))
		dst = appendF64(appendF64(dst, c.P1), c.Zipf)
		dst = wire.AppendUvarint(dst, c.Distinct)
	}
	dst = a.dc.appendFields(dst)
	dst = appendSweep(dst, a.wc.sw)
	return appendDetector(dst, a.det)
}

// RestoreState implements Snapshotter.
func (a *auto) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	readHeader(r, 'a', "auto")
	load := readLoads(r, a.n)
	tie := r.U64("tie")
	mode := readMode(r, "mode")
	first := r.Bool("first")
	seen := r.Int(a.window-1, "seen")
	total := r.Uvarint("total")
	k := r.Count(8, "sample")
	if r.Err() == nil && (k > cap(a.sample) || k != min(seen, cap(a.sample)) || first && seen >= cap(a.sample)) {
		r.Fail("%d sampled of %d seen (first %v), sample of %d", k, seen, first, cap(a.sample))
	}
	sample := make([]uint64, 0, cap(a.sample))
	for range k {
		sample = append(sample, r.U64("sampled key"))
	}
	pcgb, hllb := r.Bytes("random source"), r.Bytes("distinct keys")
	nc := r.Count(20, "choices")
	if r.Err() == nil && (nc == 0 || nc > cap(a.choice)) {
		r.Fail("%d choices, want 1 to %d", nc, cap(a.choice))
	}
	choices := make([]Choice, 0, cap(a.choice))
	for range nc {
		c := Choice{At: r.Uvarint("choice at"), Kind: readMode(r, "choice mode"), P1: readF64(r, "choice p1"),
			Zipf: readF64(r, "choice zipf"), Distinct: r.Uvarint("choice distinct")}
		if r.Err() == nil && (c.At > total || len(choices) > 0 && c.At < choices[len(choices)-1].At) {
			r.Fail("choice at %d out of order or past %d tuples", c.At, total)
		}
		choices = append(choices, c)
	}
	st := a.dc.readFields(r)
	sw := readSweep(r, load)
	det := readDetector(r, a.det)
	if err := r.Done(); err != nil {
		return corruptState("auto", err)
	}
	if sumLoads(load) != total || st.total > total || choices[len(choices)-1].Kind != mode {
		return corruptState("auto", errors.New("the loads, tuples routed and last choice disagree"))
	}
	var pcg = *a.pcg
	if err := pcg.UnmarshalBinary(pcgb); err != nil {
		return corruptState("auto", err)
	}
	hll := &sketch.HyperLogLog{}
	if err := hll.UnmarshalBinary(hllb); err != nil {
		return corruptState("auto", err)
	}
	if hll.Precision() != a.hll.Precision() {
		return corruptState("auto", errors.New("distinct-key sketch of another precision"))
	}
	if err := restoreDetector(a.det, det); err != nil {
		return corruptState("auto", err)
	}
	copy(a.load, load)
	a.mode, a.first, a.seen, a.total, a.sample, a.choice = mode, first, seen, total, sample, choices
	*a.pcg, a.hll = pcg, hll
	a.dc.commitFields(st, tie)
	a.wc.tie, a.wc.sw = tie, sw
	return nil
}
