package nexmark

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// testConfig is the reference's defaults with a fixed seed and first
// event time.
func testConfig(seed uint64) Config {
	c := DefaultConfig()
	c.Seed = seed
	c.FirstEventTime = 1_700_000_000_000_000_000
	return c
}

func newGen(t testing.TB, c Config) *Generator {
	t.Helper()
	g, err := New(c)
	require.NoError(t, err)
	return g
}

// drain returns the next n events of g (fewer at the end).
func drain(t testing.TB, g *Generator, n int) []Event {
	t.Helper()
	out := make([]Event, 0, min(n, 200_000))
	buf := make([]Event, 1000)
	for len(out) < n {
		k := g.Fill(buf[:min(len(buf), n-len(out))])
		out = append(out, buf[:k]...)
		if k == 0 {
			break
		}
	}
	return out
}

// each calls fn on the next n events of g, a batch at a time.
func each(t testing.TB, g *Generator, n int, fn func(e *Event)) {
	t.Helper()
	buf := make([]Event, 1024)
	for n > 0 {
		k := g.Fill(buf[:min(len(buf), n)])
		if k == 0 {
			t.Fatalf("the stream ended %d events early", n)
		}
		for i := range buf[:k] {
			fn(&buf[i])
		}
		n -= k
	}
}

func TestProportions(t *testing.T) {
	const n = 1_000_000
	var count [3]int
	each(t, newGen(t, testConfig(1)), n, func(e *Event) {
		i := e.Number % 50
		want := KindBid
		switch {
		case i < 1:
			want = KindPerson
		case i < 4:
			want = KindAuction
		}
		if e.Kind != want {
			t.Fatalf("event %d: kind %v, want %v", e.Number, e.Kind, want)
		}
		count[e.Kind]++
		if i == 49 {
			if count != [3]int{1, 3, 46} {
				t.Fatalf("events [%d, %d): %v of each kind, want [1 3 46]", e.Number-49, e.Number+1, count)
			}
			count = [3]int{}
		}
	})
}

// TestReferencesExist pins the id rules: persons and auctions get
// consecutive ids from FirstPersonID and FirstAuctionID, LastPersonID and
// LastAuctionID give the last created at every event, and every seller,
// bidder and auction a later event names exists (IDLead 0), inside the
// active and in-flight windows or the hot batch.
func TestReferencesExist(t *testing.T) {
	for _, lead := range []int{0, 10} {
		t.Run(map[int]string{0: "lead=0", 10: "lead=10"}[lead], func(t *testing.T) {
			c := testConfig(2)
			c.IDLead = lead
			g := newGen(t, c)
			lastP, lastA := int64(FirstPersonID-1), int64(FirstAuctionID-1)
			lead64 := int64(lead)
			each(t, g, 500_000, func(e *Event) {
				activeLo := max(lastP+1-c.NumActivePeople, FirstPersonID)
				switch e.Kind {
				case KindPerson:
					if e.Person.ID != lastP+1 {
						t.Fatalf("event %d: person %d after %d", e.Number, e.Person.ID, lastP)
					}
					lastP = e.Person.ID
				case KindAuction:
					a := e.Auction
					if a.ID != lastA+1 {
						t.Fatalf("event %d: auction %d after %d", e.Number, a.ID, lastA)
					}
					lastA = a.ID
					if a.Seller > lastP+lead64 || a.Seller < activeLo {
						t.Fatalf("event %d: seller %d, last person %d", e.Number, a.Seller, lastP)
					}
					if a.Category < FirstCategoryID || a.Category >= FirstCategoryID+NumCategories ||
						a.Expires <= a.DateTime || a.Reserve < a.InitialBid+100 {
						t.Fatalf("event %d: %+v", e.Number, a)
					}
				case KindBid:
					b := e.Bid
					if b.Auction > lastA+lead64 || b.Auction < max(lastA-int64(c.NumInFlightAuctions), FirstAuctionID) {
						t.Fatalf("event %d: auction %d, last auction %d", e.Number, b.Auction, lastA)
					}
					if b.Bidder > lastP+lead64 || b.Bidder < activeLo-HotBatch {
						t.Fatalf("event %d: bidder %d, last person %d", e.Number, b.Bidder, lastP)
					}
					if b.Price < 100 || b.Price > 100_000_000 {
						t.Fatalf("event %d: price %d", e.Number, b.Price)
					}
				}
				if g.LastPersonID(e.Number) != lastP || g.LastAuctionID(e.Number) != lastA {
					t.Fatalf("event %d: last ids %d, %d, want %d, %d", e.Number, g.LastPersonID(e.Number), g.LastAuctionID(e.Number), lastP, lastA)
				}
			})
		})
	}
}

func TestLastIDs(t *testing.T) {
	g := newGen(t, testConfig(0))
	for _, tc := range []struct{ n, person, auction int64 }{
		{0, 1000, 999}, {1, 1000, 1000}, {3, 1000, 1002}, {4, 1000, 1002}, {49, 1000, 1002},
		{50, 1001, 1002}, {51, 1001, 1003}, {5000, 1100, 1299},
	} {
		require.Equal(t, tc.person, g.LastPersonID(tc.n), "person at %d", tc.n)
		require.Equal(t, tc.auction, g.LastAuctionID(tc.n), "auction at %d", tc.n)
	}
}

// hoeffding is the deviation t that a sum of n independent [0, 1]
// variables exceeds from its mean with probability at most delta:
// P(|X - E X| >= t) <= 2 exp(-2 t^2 / n).
func hoeffding(n int, delta float64) float64 {
	return math.Sqrt(float64(n) / 2 * math.Log(2/delta))
}

// hotShare sums, over the events of kind k, whether the event named the
// hot id and the probability of that under the rule: the hot path with
// probability 1 - 1/ratio, plus the cold draw landing on the hot id, 1/w
// when the hot id is inside the cold window of w ids starting at lo.
type hotShare struct {
	n        int
	hits     int
	expected float64
}

func (h *hotShare) add(got, hot int64, ratio int, lo, w int64) {
	p := 1 - 1/float64(ratio)
	if hot >= lo && hot < lo+w {
		p += 1 / float64(ratio) / float64(w)
	}
	h.n++
	h.expected += p
	if got == hot {
		h.hits++
	}
}

func (h *hotShare) check(t *testing.T, what string) {
	t.Helper()
	bound := hoeffding(h.n, 1e-9)
	t.Logf("%s: %d of %d, expected %.1f, bound %.1f", what, h.hits, h.n, h.expected, bound)
	require.InDelta(t, h.expected, float64(h.hits), bound, what)
}

// TestHotShares checks the shares of the hot auction, bidder and seller
// against the rule's expectation, for the defaults and for other ratios.
func TestHotShares(t *testing.T) {
	for _, ratios := range [][3]int{{2, 4, 4}, {1, 3, 10}} {
		c := testConfig(3)
		c.HotAuctionRatio, c.HotBiddersRatio, c.HotSellersRatio = ratios[0], ratios[1], ratios[2]
		g := newGen(t, c)
		var auction, bidder, seller hotShare
		each(t, g, 1_000_000, func(e *Event) {
			lastP, lastA := g.LastPersonID(e.Number)-FirstPersonID, g.LastAuctionID(e.Number)-FirstAuctionID
			persons := lastP + 1
			activeLo := persons - min(persons, c.NumActivePeople)
			activeW := min(persons, c.NumActivePeople)
			switch e.Kind {
			case KindAuction:
				seller.add(e.Auction.Seller-FirstPersonID, lastP/HotBatch*HotBatch, c.HotSellersRatio, activeLo, activeW)
			case KindBid:
				lo := max(lastA-int64(c.NumInFlightAuctions), 0)
				auction.add(e.Bid.Auction-FirstAuctionID, lastA/HotBatch*HotBatch, c.HotAuctionRatio, lo, lastA-lo+1)
				hot := lastP/HotBatch*HotBatch + 1
				if hot > lastP {
					hot = max(hot-HotBatch, 0)
				}
				bidder.add(e.Bid.Bidder-FirstPersonID, hot, c.HotBiddersRatio, activeLo, activeW)
			}
		})
		auction.check(t, "hot auction")
		bidder.check(t, "hot bidder")
		seller.check(t, "hot seller")
	}
}

// TestEventTimes: event n's time is FirstEventTime + floor(n*10^9/rate)
// (checked with big integers), non-decreasing, for rates that divide 10^9
// and rates that do not.
func TestEventTimes(t *testing.T) {
	for _, rate := range []int64{10_000, 7, 3_000_001, 1e9, 3e9} {
		c := testConfig(4)
		c.EventsPerSecond = rate
		g := newGen(t, c)
		prev := int64(math.MinInt64)
		want, q := new(big.Int), new(big.Int)
		for _, e := range drain(t, g, 50_000) {
			want.Mul(big.NewInt(e.Number), big.NewInt(1e9))
			want.Quo(want, q.SetInt64(rate)).Add(want, q.SetInt64(c.FirstEventTime))
			if e.Time != want.Int64() || e.Time < prev {
				t.Fatalf("rate %d event %d: time %d, want %v (previous %d)", rate, e.Number, e.Time, want, prev)
			}
			prev = e.Time
			if dt := [3]int64{e.Person.DateTime, e.Auction.DateTime, e.Bid.DateTime}[e.Kind]; dt != e.Time {
				t.Fatalf("rate %d event %d: DateTime %d, time %d", rate, e.Number, dt, e.Time)
			}
		}
	}
}

// TestAuctionLengths: an auction lasts 1 + uniform [0, 2h) ns, h the time
// to the event NumInFlightAuctions auctions ahead; the mean is h within a
// Hoeffding bound.
func TestAuctionLengths(t *testing.T) {
	c := testConfig(5)
	g := newGen(t, c)
	h := g.TimeAt(int64(c.NumInFlightAuctions)*50/3) - g.TimeAt(0) // the rate divides 10^9: h is the same for every n
	var sum float64
	n := 0
	each(t, g, 1_000_000, func(e *Event) {
		if e.Kind != KindAuction {
			return
		}
		l := e.Auction.Expires - e.Auction.DateTime
		if l < 1 || l > 2*h {
			t.Fatalf("event %d: length %d, want [1, %d]", e.Number, l, 2*h)
		}
		sum += float64(l) / float64(2*h)
		n++
	})
	require.InDelta(t, 0.5*float64(n), sum, hoeffding(n, 1e-9))
}

func TestExtraSizes(t *testing.T) {
	c := testConfig(6)
	for _, e := range drain(t, newGen(t, c), 20_000) {
		var size, avg int
		switch e.Kind {
		case KindPerson:
			p := e.Person
			size, avg = 8+len(p.Name)+len(p.Email)+len(p.CreditCard)+len(p.City)+len(p.State), c.AvgPersonBytes
			require.Len(t, p.CreditCard, 19)
		case KindAuction:
			a := e.Auction
			size, avg = 48+len(a.ItemName)+len(a.Description), c.AvgAuctionBytes
			require.LessOrEqual(t, len(a.ItemName), 19)
			require.LessOrEqual(t, len(a.Description), 99)
		case KindBid:
			size, avg = 32, c.AvgBidBytes
			require.NotEmpty(t, e.Bid.Channel)
			require.Contains(t, e.Bid.URL, "https://www.nexmark.com/")
		}
		extra := []string{e.Person.Extra, e.Auction.Extra, e.Bid.Extra}[e.Kind]
		delta := int(math.Round(float64(avg-size) * 0.2))
		require.GreaterOrEqual(t, size+len(extra), avg-delta)
		require.LessOrEqual(t, size+len(extra), avg+max(delta-1, 0))
	}
	c.AvgPersonBytes, c.AvgAuctionBytes, c.AvgBidBytes = 0, 0, 0
	for _, e := range drain(t, newGen(t, c), 1000) {
		require.Empty(t, e.Person.Extra+e.Auction.Extra+e.Bid.Extra)
	}
}

// TestPrice: price's table and cubic give round(100 * 10^(6u)) as
// math.Pow does, to the cent.
func TestPrice(t *testing.T) {
	for i := range uint64(200_000) {
		r := rng{s: i * 0x2545f4914f6cdd1d}
		u := r
		want := math.Round(math.Pow(10, u.float()*6) * 100)
		require.InDelta(t, want, float64(price(&r)), 1, "draw %d", i)
	}
}

func TestDeterminism(t *testing.T) {
	a := drain(t, newGen(t, testConfig(7)), 100_000)
	b := drain(t, newGen(t, testConfig(7)), 100_000)
	require.Equal(t, a, b)
	other := drain(t, newGen(t, testConfig(8)), 100_000)
	same := 0
	for i := range a {
		if a[i] == other[i] {
			same++
		}
	}
	require.Less(t, same, len(a)/100, "seeds 7 and 8 agree on %d of %d events", same, len(a))
}

// TestRandomAccess: EventAt equals sequential generation, near the start
// and after a Seek far into the stream, for a rate that does not divide
// 10^9.
func TestRandomAccess(t *testing.T) {
	c := testConfig(9)
	c.EventsPerSecond = 123_457
	g := newGen(t, c)
	for _, e := range drain(t, g, 50_000) {
		got, ok := g.EventAt(e.Number)
		require.True(t, ok)
		require.Equal(t, e, got)
	}
	for _, start := range []int64{1e6 + 3, 1e12 + 17, 9e14} {
		require.NoError(t, g.Seek(binary.AppendUvarint(nil, uint64(start))))
		for _, e := range drain(t, g, 2000) {
			got, _ := g.EventAt(e.Number)
			require.Equal(t, got, e)
		}
	}
	_, ok := g.EventAt(-1)
	require.False(t, ok)
}

// TestParts: parts 0..k-1 of one Config give together exactly the events
// of the whole stream, each part its own residue class.
func TestParts(t *testing.T) {
	c := testConfig(10)
	c.NumEvents = 20_011
	whole := drain(t, newGen(t, c), math.MaxInt)
	require.Len(t, whole, int(c.NumEvents))
	for _, k := range []int{1, 3, 7, 64} {
		srcs, err := Sources(c, k)
		require.NoError(t, err)
		var all []Event
		for i, s := range srcs {
			g := s.(*Generator)
			part := drain(t, g, math.MaxInt)
			for _, e := range part {
				if e.Number%int64(k) != int64(i) {
					t.Fatalf("part %d of %d: event %d", i, k, e.Number)
				}
			}
			require.Equal(t, c.NumEvents, g.NextNumber())
			require.Zero(t, g.Fill(make([]Event, 4)))
			all = append(all, part...)
		}
		slices.SortFunc(all, func(a, b Event) int { return int(a.Number - b.Number) })
		require.Equal(t, whole, all, "k = %d", k)
	}
}

func TestPositions(t *testing.T) {
	c := testConfig(11)
	c.NumEvents = 10_000
	g, err := NewPart(c, 2, 3)
	require.NoError(t, err)
	drain(t, g, 1000)
	pos, err := g.AppendPosition(nil)
	require.NoError(t, err)
	want := drain(t, g, 500)

	h, err := NewPart(c, 2, 3)
	require.NoError(t, err)
	require.NoError(t, h.Seek(pos))
	require.Equal(t, want, drain(t, h, 500))

	drain(t, g, math.MaxInt)
	end, err := g.AppendPosition(nil)
	require.NoError(t, err)
	require.NoError(t, h.Seek(end))
	require.Zero(t, h.Fill(make([]Event, 1)))

	other, err := NewPart(c, 1, 3)
	require.NoError(t, err)
	before := other.NextNumber()
	for name, bad := range map[string][]byte{
		"empty":         nil,
		"trailing":      append(append([]byte{}, pos...), 0),
		"other part":    binary.AppendUvarint(nil, 2),
		"past the end":  binary.AppendUvarint(nil, 10_001),
		"long overflow": {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		err := other.Seek(bad)
		require.ErrorIs(t, err, stream.ErrPosition, name)
		require.Equal(t, before, other.NextNumber(), name)
	}
}

func TestTimeLimit(t *testing.T) {
	c := testConfig(12)
	c.FirstEventTime = math.MaxInt64 - 5e9 // 5 s of room
	c.EventsPerSecond = 10
	g := newGen(t, c)
	require.Equal(t, int64(51), g.Len())
	evs := drain(t, g, 100)
	require.Len(t, evs, 51)
	require.Equal(t, int64(math.MaxInt64), evs[50].Time)

	c.NumEvents = 52
	_, err := New(c)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "NumEvents")
}

func TestInvalidConfig(t *testing.T) {
	for name, change := range map[string]func(*Config){
		"EventsPerSecond":     func(c *Config) { c.EventsPerSecond = 0 },
		"FirstEventTime":      func(c *Config) { c.FirstEventTime = -1 },
		"NumEvents":           func(c *Config) { c.NumEvents = -1 },
		"PersonProportion":    func(c *Config) { c.PersonProportion = 0 },
		"AuctionProportion":   func(c *Config) { c.AuctionProportion = -3 },
		"BidProportion":       func(c *Config) { c.BidProportion = maxProportion + 1 },
		"HotAuctionRatio":     func(c *Config) { c.HotAuctionRatio = 0 },
		"HotSellersRatio":     func(c *Config) { c.HotSellersRatio = -1 },
		"HotBiddersRatio":     func(c *Config) { c.HotBiddersRatio = 0 },
		"NumInFlightAuctions": func(c *Config) { c.NumInFlightAuctions = -1 },
		"NumActivePeople":     func(c *Config) { c.NumActivePeople = 0 },
		"IDLead":              func(c *Config) { c.IDLead = -1 },
		"AvgPersonBytes":      func(c *Config) { c.AvgPersonBytes = -1 },
		"AvgAuctionBytes":     func(c *Config) { c.AvgAuctionBytes = MaxAvgBytes + 1 },
		"AvgBidBytes":         func(c *Config) { c.AvgBidBytes = -100 },
	} {
		c := DefaultConfig()
		change(&c)
		_, err := New(c)
		require.ErrorIs(t, err, ErrInvalidParameter, name)
		require.ErrorContains(t, err, name+" = ", name)
	}
	_, err := New(Config{})
	require.ErrorIs(t, err, ErrInvalidParameter)
	for _, pp := range [][2]int{{0, 0}, {-1, 3}, {3, 3}} {
		_, err := NewPart(DefaultConfig(), pp[0], pp[1])
		require.True(t, errors.Is(err, ErrInvalidParameter), "part %d of %d", pp[0], pp[1])
	}
	_, err = Sources(DefaultConfig(), 0)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestFillAllocatesNothing guards the hot path: Fill, EventAt and the
// Positioner methods into a sized buffer allocate nothing.
func TestFillAllocatesNothing(t *testing.T) {
	g := newGen(t, testConfig(13))
	buf := make([]Event, 1024)
	require.Zero(t, testing.AllocsPerRun(50, func() { g.Fill(buf) }))
	require.Zero(t, testing.AllocsPerRun(50, func() { g.EventAt(12345) }))
	pos := make([]byte, 0, 16)
	require.Zero(t, testing.AllocsPerRun(50, func() { pos, _ = g.AppendPosition(pos[:0]) }))
}

func TestKindString(t *testing.T) {
	require.Equal(t, "person", KindPerson.String())
	require.Equal(t, "auction", KindAuction.String())
	require.Equal(t, "bid", KindBid.String())
	require.Equal(t, "kind(?)", Kind(7).String())
	g := newGen(t, testConfig(14))
	for n := range int64(150) {
		e, _ := g.EventAt(n)
		require.Equal(t, g.KindAt(n), e.Kind)
		require.Equal(t, g.TimeAt(n), EventTime(e))
	}
}
