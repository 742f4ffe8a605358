package hotkey

// WindowModel replays Windowed's two-summary schedule with exact counts:
// the reference a windowed detector's answers are checked against (the
// tests' guarantees, and streambench detector's missed and false heads).
// Memory O(distinct keys in 2W tuples).
type WindowModel struct {
	w      int
	counts [2]map[uint64]int
	n      [2]int
	old    int
}

// NewWindowModel returns the model of a detector with window W.
func NewWindowModel(window int) *WindowModel {
	return &WindowModel{w: window, counts: [2]map[uint64]int{{}, {}}}
}

// Observe counts key and returns its exact count in the older summary's
// interval and that interval's length.
func (m *WindowModel) Observe(key uint64) (count, tuples int) {
	o := m.old
	m.counts[o][key]++
	m.n[o]++
	if m.n[o] > m.w {
		m.counts[1-o][key]++
		m.n[1-o]++
	}
	if m.n[o] == 2*m.w {
		clear(m.counts[o])
		m.n[o] = 0
		m.old = 1 - o
	}
	return m.counts[m.old][key], m.n[m.old]
}
