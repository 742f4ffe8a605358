package query

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/runtime"
)

// Query is one query of the suite by name, as a harness runs it: the
// builder, what its Options may set, and the time its source must use.
type Query struct {
	// Name is the reference's name: "q0", "q5", ...
	Name string
	// Summary says what the query computes, in a few words.
	Summary string
	// Keyed tells that the query has keyed state, which Options'
	// Partitioner, Parallelism and StateBackend tune; a stateless query
	// runs on its source's workers.
	Keyed bool
	// Sessions tells that its state is session windows, which a state
	// backend does not hold.
	Sessions bool
	// Joins tells that it joins two streams, whose state is on the heap,
	// which a state backend does not hold.
	Joins bool
	// ProcessingTime tells that its source must run on the processing
	// clock (ProcessingTime) instead of nexmark.EventTime: q12.
	ProcessingTime bool
	// Files tells that it writes files (q10): Collector.Dir is needed.
	Files  bool
	attach func(src *runtime.Stream[nexmark.Event], opts Options, c *Collector) error
}

// Collector takes a query's rows: it counts them and, when JSON is set,
// writes each as a line of JSON ({"query": name, "row": {...}}). The
// zero Collector counts rows and writes none. Safe for the concurrent
// sink workers.
type Collector struct {
	// JSON, when set, receives every row as a JSON line.
	JSON io.Writer
	// Dir is where q10 writes its files (runtime.FileSink).
	Dir string
	// Sources is the number of the source's workers (q10's files are
	// written per worker).
	Sources int

	mu     sync.Mutex
	counts [64]paddedCount
}

type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// Rows returns the rows collected so far.
func (c *Collector) Rows() int64 {
	var n int64
	for i := range c.counts {
		n += c.counts[i].n.Load()
	}
	return n
}

// take counts a row of worker's and writes it when JSON is set. It is
// generic so that a row is boxed into an interface only to be written.
func take[R any](c *Collector, name string, worker int, row R) error {
	c.counts[worker%len(c.counts)].n.Add(1)
	if c.JSON == nil {
		return nil
	}
	return c.write(name, row)
}

func (c *Collector) write(name string, row any) error {
	b, err := json.Marshal(struct {
		Query string `json:"query"`
		Row   any    `json:"row"`
	}{name, row})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.JSON.Write(append(b, '\n'))
	return err
}

// Attach builds q on src with opts and sinks its rows into c.
func (q Query) Attach(src *runtime.Stream[nexmark.Event], opts Options, c *Collector) error {
	if q.Files && c.Dir == "" {
		return invalidParam("Collector.Dir", `""`, "a directory for "+q.Name+"'s files")
	}
	return q.attach(src, opts, c)
}

// entry makes the Query of a builder whose rows go to a callback sink.
func entry[R any](name, summary string, keyed bool, build func(*runtime.Stream[nexmark.Event], Options) (*runtime.Stream[R], error)) Query {
	return Query{Name: name, Summary: summary, Keyed: keyed,
		attach: func(src *runtime.Stream[nexmark.Event], opts Options, c *Collector) error {
			s, err := build(src, opts)
			if err != nil {
				return err
			}
			runtime.Sink(s, name+"/sink", func(w int, r R) error { return take(c, name, w, r) })
			return nil
		}}
}

// joinEntry is the entry of a query that joins.
func joinEntry[R any](name, summary string, build func(*runtime.Stream[nexmark.Event], Options) (*runtime.Stream[R], error)) Query {
	q := entry(name, summary, true, build)
	q.Joins = true
	return q
}

func q10Entry() Query {
	q := entry("q10", "every bid with its day and minute, written to files exactly once", false, Q10)
	q.Files = true
	q.attach = func(src *runtime.Stream[nexmark.Event], opts Options, c *Collector) error {
		s, err := Q10(src, opts)
		if err != nil {
			return err
		}
		fs, err := runtime.NewFileSink(c.Dir, max(c.Sources, 1), func(dst []byte, r Q10Row) ([]byte, error) {
			// A FileSink encodes on the writing worker's goroutine; the
			// worker is not passed, so rows count in slot 0.
			if err := take(c, "q10", 0, r); err != nil {
				return nil, err
			}
			return AppendQ10CSV(dst, r)
		})
		if err != nil {
			return err
		}
		runtime.TwoPhaseSink(s, "q10/files", fs)
		return nil
	}
	return q
}

// All returns the queries skewer runs, in the suite's order; Unsupported
// are the others.
func All() []Query {
	q11 := entry("q11", "bids per bidder per session (10 s gap)", true, Q11)
	q11.Sessions = true
	q12 := entry("q12", "bids per bidder per 10 s of a deterministic processing clock", true, Q12)
	q12.ProcessingTime = true
	return []Query{
		entry("q0", "pass-through: every bid", false, Q0),
		entry("q1", "every bid with its price in euros", false, Q1),
		entry("q2", "bids on auctions whose id is a multiple of 123", false, Q2),
		joinEntry("q3", "local item suggestion: auctions of category 10 by sellers in OR, ID or CA", Q3),
		joinEntry("q4", "average closing price per category (q9's winning bids)", Q4),
		entry("q5", "hot items: the auctions with the most bids per sliding window (10 s every 2 s)", true, Q5),
		joinEntry("q6", "average selling price per seller over its last 11 winning bids (q9's winners)", Q6),
		entry("q7", "highest bids per tumbling window (10 s)", true, Q7),
		joinEntry("q8", "new users: persons who created an auction in the 10 s window they registered in", Q8),
		joinEntry("q9", "winning bids: every auction's highest bid before it expires", Q9),
		q10Entry(),
		q11,
		q12,
		entry("q13", "every bid with its auction's row of a static side input", false, Q13),
		entry("q14", "bids in a euro price range, with the time of day and a count of 'c'", false, Q14),
		entry("q15", "per-day bid statistics with exact distinct bidders and auctions", true, Q15),
		entry("q16", "q15's statistics per channel and day", true, Q16),
		entry("q17", "per-auction and per-day bid statistics", true, Q17),
		entry("q18", "the latest bid per bidder and auction", true, Q18),
		entry("q19", "the 10 highest bids per auction", true, Q19),
		joinEntry("q20", "every bid on an auction of category 10, with the auction", Q20),
		entry("q21", "bids with their channel's id", false, Q21),
		entry("q22", "bids with their URL's directories", false, Q22),
	}
}

// Unsupported are the suite's queries skewer does not run, each with why.
var Unsupported = map[string]string{
	"q23": "joins persons, auctions and bids",
}

// Names returns the names of All, in order.
func Names() []string {
	var ns []string
	for _, q := range All() {
		ns = append(ns, q.Name)
	}
	return ns
}

// Lookup returns the queries a comma-separated list names ("all" is every
// query of All), in the list's order.
func Lookup(list string) ([]Query, error) {
	all := All()
	if list == "all" {
		return all, nil
	}
	var out []Query
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, q := range all {
			if q.Name == n {
				out, found = append(out, q), true
			}
		}
		if !found {
			if why, ok := Unsupported[n]; ok {
				return nil, fmt.Errorf("%w: %s is not supported: it %s", ErrInvalidParameter, n, why)
			}
			return nil, fmt.Errorf("%w: %q is not a query, want all or a list of %s", ErrInvalidParameter, n, strings.Join(Names(), ", "))
		}
	}
	return out, nil
}
