package operators

// timer is an entry of a session firing queue: slot idx is due at time at,
// if it still holds generation gen and still wants that time.
type timer struct {
	at  int64
	idx int32
	gen uint32
}

func (a timer) before(b timer) bool { return a.at < b.at || a.at == b.at && a.idx < b.idx }

// timerQueue is a min-queue of timers on (at, idx). Session timers arrive
// almost in order (a new session is due gap after its first input, and
// inputs come nearly in time order), so a timer no earlier than the last
// one queued goes to a sorted FIFO, pushed and popped in O(1) with no
// unpredictable branch, and only the others to a binary heap. Pops take
// the earlier of the two heads, so the order is exactly a heap's.
type timerQueue struct {
	fifo []timer // sorted; live entries are fifo[head:]
	head int
	heap []timer
}

func (q *timerQueue) len() int { return len(q.fifo) - q.head + len(q.heap) }

func (q *timerQueue) push(x timer) {
	if n := len(q.fifo); n == q.head || !x.before(q.fifo[n-1]) {
		if q.head == n {
			q.fifo, q.head = q.fifo[:0], 0
		} else if q.head >= 1024 && 2*q.head >= n {
			q.fifo = q.fifo[:copy(q.fifo, q.fifo[q.head:])]
			q.head = 0
		}
		q.fifo = append(q.fifo, x)
		return
	}
	q.heap = append(q.heap, x)
	h := q.heap
	c := len(h) - 1
	for c > 0 {
		p := (c - 1) / 2
		if !x.before(h[p]) {
			break
		}
		h[c] = h[p]
		c = p
	}
	h[c] = x
}

// peek returns the earliest timer; ok is false when the queue is empty.
func (q *timerQueue) peek() (t timer, ok bool) {
	switch {
	case q.head < len(q.fifo) && (len(q.heap) == 0 || q.fifo[q.head].before(q.heap[0])):
		return q.fifo[q.head], true
	case len(q.heap) > 0:
		return q.heap[0], true
	}
	return timer{}, false
}

// pop removes and returns the earliest timer; the queue must not be empty.
func (q *timerQueue) pop() timer {
	if q.head < len(q.fifo) && (len(q.heap) == 0 || q.fifo[q.head].before(q.heap[0])) {
		q.head++
		return q.fifo[q.head-1]
	}
	h := q.heap
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h = h[:n]
	q.heap = h
	if n == 0 {
		return top
	}
	p := 0
	for {
		c := 2*p + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(x) {
			break
		}
		h[p] = h[c]
		p = c
	}
	h[p] = x
	return top
}
