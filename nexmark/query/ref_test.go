package query

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/skewerhq/skewer/nexmark"
)

// The reference implementations: each query over the whole event list in
// one loop with plain maps, written from the suite's SQL without the
// runtime, operators or the package's helpers (regexp for q21, Split for
// q22, time.Format for days), so that a job is checked against an
// independent computation.

func refBids(events []nexmark.Event) []nexmark.Event {
	var out []nexmark.Event
	for _, e := range events {
		if e.Kind == nexmark.KindBid {
			out = append(out, e)
		}
	}
	return out
}

func refQ0(events []nexmark.Event) []Q0Row {
	var out []Q0Row
	for _, e := range refBids(events) {
		b := e.Bid
		out = append(out, Q0Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return out
}

func refQ1(events []nexmark.Event) []Q1Row {
	var out []Q1Row
	for _, e := range refBids(events) {
		b := e.Bid
		out = append(out, Q1Row{b.Auction, b.Bidder, b.Price * 908, b.DateTime, b.Extra})
	}
	return out
}

func refQ2(events []nexmark.Event) []Q2Row {
	var out []Q2Row
	for _, e := range refBids(events) {
		if e.Bid.Auction%123 == 0 {
			out = append(out, Q2Row{e.Bid.Auction, e.Bid.Price})
		}
	}
	return out
}

func refQ14(events []nexmark.Event) []Q14Row {
	var out []Q14Row
	for _, e := range refBids(events) {
		b := e.Bid
		// 0.908 * price in (10^6, 5·10^7), in exact thousandths.
		if p := b.Price * 908; p > 1_000_000*1000 && p < 50_000_000*1000 {
			h := time.Unix(0, b.DateTime).UTC().Hour()
			kind := "otherTime"
			if h >= 8 && h <= 18 {
				kind = "dayTime"
			} else if h <= 6 || h >= 20 {
				kind = "nightTime"
			}
			out = append(out, Q14Row{b.Auction, b.Bidder, p, kind, b.DateTime, b.Extra, int64(strings.Count(b.Extra, "c"))})
		}
	}
	return out
}

var refChannelID = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

func refQ21(events []nexmark.Event) []Q21Row {
	ids := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
	var out []Q21Row
	match := map[string][]string{} // the URLs are few: each matched once
	for _, e := range refBids(events) {
		b := e.Bid
		m, ok := match[b.URL]
		if !ok {
			m = refChannelID.FindStringSubmatch(b.URL)
			match[b.URL] = m
		}
		id, hot := ids[strings.ToLower(b.Channel)]
		if !hot && m == nil {
			continue
		}
		if !hot {
			id = m[2]
		}
		out = append(out, Q21Row{b.Auction, b.Bidder, b.Price, b.Channel, id})
	}
	return out
}

func refQ22(events []nexmark.Event) []Q22Row {
	var out []Q22Row
	for _, e := range refBids(events) {
		b := e.Bid
		parts := strings.Split(b.URL, "/")
		part := func(i int) string {
			if i < len(parts) {
				return parts[i]
			}
			return ""
		}
		out = append(out, Q22Row{b.Auction, b.Bidder, b.Price, b.Channel, part(3), part(4), part(5)})
	}
	return out
}

func refQ10(events []nexmark.Event) []Q10Row {
	var out []Q10Row
	for _, e := range refBids(events) {
		b := e.Bid
		t := time.Unix(0, b.DateTime).UTC()
		out = append(out, Q10Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra, t.Format("2006-01-02"), t.Format("15:04")})
	}
	return out
}

// floorDiv is floor(a / b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func refQ5(events []nexmark.Event) []Q5Row {
	size, slide := int64(10*time.Second), int64(2*time.Second)
	type key struct{ start, auction int64 }
	counts := map[key]uint64{}
	for _, e := range refBids(events) {
		last := floorDiv(e.Time, slide) * slide
		for s := last; s > e.Time-size; s -= slide {
			counts[key{s, e.Bid.Auction}]++
		}
	}
	most := map[int64]uint64{}
	for k, n := range counts {
		most[k.start] = max(most[k.start], n)
	}
	var out []Q5Row
	for k, n := range counts {
		if n == most[k.start] {
			out = append(out, Q5Row{k.auction, n, k.start, k.start + size})
		}
	}
	return out
}

func refQ7(events []nexmark.Event) []Q7Row {
	size := int64(10 * time.Second)
	most := map[int64]int64{}
	for _, e := range refBids(events) {
		s := floorDiv(e.Time, size) * size
		if p, ok := most[s]; !ok || e.Bid.Price > p {
			most[s] = e.Bid.Price
		}
	}
	var out []Q7Row
	for _, e := range refBids(events) {
		s := floorDiv(e.Time, size) * size
		if b := e.Bid; b.Price == most[s] {
			out = append(out, Q7Row{b.Auction, b.Price, b.Bidder, b.DateTime, b.Extra, s, s + size})
		}
	}
	return out
}

// refSessions is q11 over bids timed by timeOf: per bidder, sorted
// times, a new session wherever two are gap or more apart.
func refQ11(events []nexmark.Event) []BidderCount {
	gap := int64(10 * time.Second)
	times := map[int64][]int64{}
	for _, e := range refBids(events) {
		times[e.Bid.Bidder] = append(times[e.Bid.Bidder], e.Time)
	}
	var out []BidderCount
	for bidder, ts := range times {
		slices.Sort(ts)
		start, n := ts[0], uint64(1)
		for i := 1; i < len(ts); i++ {
			if ts[i]-ts[i-1] >= gap {
				out = append(out, BidderCount{bidder, n, start, ts[i-1] + gap})
				start, n = ts[i], 0
			}
			n++
		}
		out = append(out, BidderCount{bidder, n, start, ts[len(ts)-1] + gap})
	}
	return out
}

func refQ12(events []nexmark.Event, rate int64) []BidderCount {
	size := int64(10 * time.Second)
	type key struct{ bidder, start int64 }
	counts := map[key]uint64{}
	for _, e := range refBids(events) {
		// The processing clock: event n at n / rate seconds, in ns.
		t := e.Number * int64(time.Second) / rate
		counts[key{e.Bid.Bidder, floorDiv(t, size) * size}]++
	}
	var out []BidderCount
	for k, n := range counts {
		out = append(out, BidderCount{k.bidder, n, k.start, k.start + size})
	}
	return out
}

func refRank(p int64) int {
	if p < 10_000 {
		return 1
	}
	if p < 1_000_000 {
		return 2
	}
	return 3
}

// refDaily computes DailyStats over bids with sets per rank.
type refDaily struct {
	bids              [4]int64
	bidders, auctions [4]map[int64]bool
	latest            int64
}

func (d *refDaily) add(b nexmark.Bid) {
	if d.bidders[0] == nil {
		for i := range 4 {
			d.bidders[i], d.auctions[i] = map[int64]bool{}, map[int64]bool{}
		}
	}
	r := refRank(b.Price)
	for _, i := range []int{0, r} {
		d.bids[i]++
		d.bidders[i][b.Bidder] = true
		d.auctions[i][b.Auction] = true
	}
	d.latest = max(d.latest, b.DateTime)
}

func (d *refDaily) stats() DailyStats {
	n := func(m map[int64]bool) int64 { return int64(len(m)) }
	return DailyStats{d.bids[0], d.bids[1], d.bids[2], d.bids[3],
		n(d.bidders[0]), n(d.bidders[1]), n(d.bidders[2]), n(d.bidders[3]),
		n(d.auctions[0]), n(d.auctions[1]), n(d.auctions[2]), n(d.auctions[3])}
}

func refDay(t int64) string { return time.Unix(0, t).UTC().Format("2006-01-02") }

func refQ15(events []nexmark.Event) []Q15Row {
	days := map[string]*refDaily{}
	for _, e := range refBids(events) {
		d := refDay(e.Bid.DateTime)
		if days[d] == nil {
			days[d] = &refDaily{}
		}
		days[d].add(e.Bid)
	}
	var out []Q15Row
	for d, s := range days {
		out = append(out, Q15Row{d, s.stats()})
	}
	return out
}

func refQ16(events []nexmark.Event) []Q16Row {
	type key struct{ channel, day string }
	groups := map[key]*refDaily{}
	for _, e := range refBids(events) {
		k := key{e.Bid.Channel, refDay(e.Bid.DateTime)}
		if groups[k] == nil {
			groups[k] = &refDaily{}
		}
		groups[k].add(e.Bid)
	}
	var out []Q16Row
	for k, s := range groups {
		out = append(out, Q16Row{k.channel, k.day, time.Unix(0, s.latest).UTC().Format("15:04"), s.stats()})
	}
	return out
}

func refQ17(events []nexmark.Event) []Q17Row {
	type key struct {
		auction int64
		day     string
	}
	groups := map[key]*Q17Row{}
	for _, e := range refBids(events) {
		b := e.Bid
		k := key{b.Auction, refDay(b.DateTime)}
		g := groups[k]
		if g == nil {
			g = &Q17Row{Auction: b.Auction, Day: k.day, Min: b.Price, Max: b.Price}
			groups[k] = g
		}
		g.TotalBids++
		switch refRank(b.Price) {
		case 1:
			g.Rank1Bids++
		case 2:
			g.Rank2Bids++
		default:
			g.Rank3Bids++
		}
		g.Min, g.Max, g.Sum = min(g.Min, b.Price), max(g.Max, b.Price), g.Sum+b.Price
	}
	var out []Q17Row
	for _, g := range groups {
		g.Avg = g.Sum / g.TotalBids
		out = append(out, *g)
	}
	return out
}

func refBidRow(b nexmark.Bid) BidRow {
	return BidRow{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra}
}

func refQ18(events []nexmark.Event) []BidRow {
	type key struct{ bidder, auction int64 }
	last := map[key]nexmark.Event{}
	for _, e := range refBids(events) {
		k := key{e.Bid.Bidder, e.Bid.Auction}
		// Events come in number order: a later or equal time replaces.
		if l, ok := last[k]; !ok || e.Bid.DateTime >= l.Bid.DateTime {
			last[k] = e
		}
	}
	var out []BidRow
	for _, e := range last {
		out = append(out, refBidRow(e.Bid))
	}
	return out
}

func refQ19(events []nexmark.Event) []Q19Row {
	per := map[int64][]nexmark.Event{}
	for _, e := range refBids(events) {
		per[e.Bid.Auction] = append(per[e.Bid.Auction], e)
	}
	var out []Q19Row
	for _, es := range per {
		slices.SortStableFunc(es, func(a, b nexmark.Event) int { return cmp.Compare(b.Bid.Price, a.Bid.Price) })
		for i, e := range es[:min(len(es), 10)] {
			out = append(out, Q19Row{refBidRow(e.Bid), int64(i + 1)})
		}
	}
	return out
}
