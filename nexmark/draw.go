package nexmark

import (
	"math"

	"github.com/skewerhq/skewer/internal/hashx"
)

// fill writes the event at c into e. Each event draws from its own rng,
// seeded by the generator's key and the event number alone.
func (g *Generator) fill(e *Event, c *cursor) {
	r := rng{s: hashx.Mix64(g.key ^ uint64(c.n))}
	e.Number, e.Time = c.n, g.timeOf(c)
	switch pp := int64(g.cfg.PersonProportion); {
	case c.offset < pp:
		e.Kind = KindPerson
		e.Auction, e.Bid = Auction{}, Bid{}
		g.person(&e.Person, &r, c, e.Time)
	case c.offset < pp+int64(g.cfg.AuctionProportion):
		e.Kind = KindAuction
		e.Person, e.Bid = Person{}, Bid{}
		g.auction(&e.Auction, &r, c, e.Time)
	default:
		e.Kind = KindBid
		e.Person, e.Auction = Person{}, Auction{}
		g.bid(&e.Bid, &r, c, e.Time)
	}
}

// person draws a new person: the next id, a name, email, card, city and
// state from the tables, in the reference's order.
func (g *Generator) person(p *Person, r *rng, c *cursor, t int64) {
	v := g.v
	p.ID = g.lastPerson(c.epoch, c.offset) + FirstPersonID
	p.Name = v.names[r.intn(len(v.names))]
	p.Email = v.emails[r.intn(len(v.emails))]
	p.CreditCard = v.card(r.intn(numCards))
	p.City = usCities[r.intn(len(usCities))]
	p.State = usStates[r.intn(len(usStates))]
	p.DateTime = t
	size := 8 + len(p.Name) + len(p.Email) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = v.extra(r, size, g.cfg.AvgPersonBytes)
}

// auction draws a new auction: the next id, a seller (the hot one with
// probability 1 - 1/HotSellersRatio), a category, prices and a length.
func (g *Generator) auction(a *Auction, r *rng, c *cursor, t int64) {
	v := g.v
	a.ID = g.lastAuction(c.epoch, c.offset) + FirstAuctionID
	if r.intn(g.cfg.HotSellersRatio) > 0 {
		a.Seller = g.lastPerson(c.epoch, c.offset) / HotBatch * HotBatch
	} else {
		a.Seller = g.coldPerson(r, c)
	}
	a.Seller += FirstPersonID
	a.Category = FirstCategoryID + int64(r.intn(NumCategories))
	a.InitialBid = price(r)
	a.DateTime = t
	a.Expires = satAdd(t, g.auctionLength(r, c, t))
	a.ItemName = v.text(r, 20)
	a.Description = v.text(r, 100)
	a.Reserve = a.InitialBid + price(r)
	size := 8 + len(a.ItemName) + len(a.Description) + 5*8
	a.Extra = v.extra(r, size, g.cfg.AvgAuctionBytes)
}

// bid draws a bid: the hot auction with probability 1 - 1/HotAuctionRatio
// else one of the in-flight window, the hot bidder with probability
// 1 - 1/HotBiddersRatio else an active person, a price, and a hot channel
// (probability 1/2) or one of the numChannels others. The two hot choices
// share one 64-bit draw (32 bits each), and so do the two channel choices.
func (g *Generator) bid(b *Bid, r *rng, c *cursor, t int64) {
	v := g.v
	hot := r.next()
	if reduce32(hot, g.cfg.HotAuctionRatio) > 0 {
		b.Auction = g.lastAuction(c.epoch, c.offset) / HotBatch * HotBatch
	} else {
		b.Auction = g.coldAuction(r, c)
	}
	b.Auction += FirstAuctionID
	if reduce32(hot>>32, g.cfg.HotBiddersRatio) > 0 {
		b.Bidder = g.hotBidder(c)
	} else {
		b.Bidder = g.coldPerson(r, c)
	}
	b.Bidder += FirstPersonID
	b.Price = price(r)
	if ch := r.next(); ch&1 != 0 {
		i := reduce32(ch>>32, len(hotChannel))
		b.Channel, b.URL = hotChannel[i], v.hotURLs[i]
	} else {
		i := reduce32(ch>>32, numChannels)
		b.Channel, b.URL = v.channels[i], v.urls[i]
	}
	b.DateTime = t
	b.Extra = v.extra(r, 4*8, g.cfg.AvgBidBytes)
}

// hotBidder is the base-0 hot bidder at c: the second person of the last
// batch of HotBatch persons, so that hot bidders and hot sellers differ.
// While that person is more than IDLead ids ahead (the batch's first
// person is the last one created), it is the previous batch's second
// person, or person 0 in the first batch.
func (g *Generator) hotBidder(c *cursor) int64 {
	last := g.lastPerson(c.epoch, c.offset)
	hot := last/HotBatch*HotBatch + 1
	if hot <= last+int64(g.cfg.IDLead) {
		return hot
	}
	if hot > HotBatch {
		return hot - HotBatch
	}
	return 0
}

// coldPerson is a base-0 person uniform over the last NumActivePeople
// persons and IDLead ids ahead.
func (g *Generator) coldPerson(r *rng, c *cursor) int64 {
	n := g.lastPerson(c.epoch, c.offset) + 1
	active := min(n, g.cfg.NumActivePeople)
	return n - active + r.int63n(active+int64(g.cfg.IDLead))
}

// coldAuction is a base-0 auction uniform over the last
// NumInFlightAuctions+1 auctions and IDLead ids ahead.
func (g *Generator) coldAuction(r *rng, c *cursor) int64 {
	last := g.lastAuction(c.epoch, c.offset)
	lo := max(last-int64(g.cfg.NumInFlightAuctions), 0)
	return lo + r.int63n(last-lo+1+int64(g.cfg.IDLead))
}

// auctionLength is 1 + uniform [0, 2h) ns, h the event time from t to
// the event horizon events ahead: auctions last h on average, so about
// NumInFlightAuctions are open at any time.
func (g *Generator) auctionLength(r *rng, c *cursor, t int64) int64 {
	h := math.MaxInt64 - t
	if c.n <= math.MaxInt64-g.horizon {
		h = g.TimeAt(c.n+g.horizon) - t
	}
	return 1 + r.int63n(max(satAdd(h, h), 1))
}

// price is the reference's price in cents, round(100 * 10^(6u)) for u
// uniform in [0, 1): log-uniform from 1 to 10^6 dollars. 10^(6u) is
// 2^x, x = 6u*log2(10), computed as 2^floor(x) times a table entry
// 2^(j/1024) times a cubic for the last 1/1024 (relative error below
// 1e-13), which costs a fraction of math.Exp.
func price(r *rng) int64 {
	y := r.float() * (6 * math.Log2E / math.Log10E * expSteps)
	k := int(y)
	f := float64(y-float64(k)) * (math.Ln2 / expSteps)
	poly := float64(1 + f*float64(1+f*float64(0.5+f*(1.0/6))))
	return int64(float64(exp2Table[k&(expSteps-1)]*poly)*centScale[k>>expBits] + 0.5)
}

const (
	expBits  = 10
	expSteps = 1 << expBits
)

var (
	// exp2Table holds 2^(j/expSteps) for j in [0, expSteps).
	exp2Table = func() (t [expSteps]float64) {
		for j := range t {
			t[j] = math.Exp2(float64(j) / expSteps)
		}
		return t
	}()
	// centScale holds 100 * 2^h for the integer part h of x < 20.
	centScale = func() (t [20]float64) {
		for h := range t {
			t[h] = 100 * float64(uint64(1)<<h)
		}
		return t
	}()
)

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
