package query

import (
	"fmt"
	"sort"
	"time"

	"github.com/skewerhq/skewer/nexmark"
)

// The references of the queries that join, written from the suite's SQL
// as nested loops over hash maps of the whole stream, with no retention
// and no windows of the runtime's.

func refQ3(events []nexmark.Event) []Q3Row {
	local := map[int64]nexmark.Person{}
	for _, e := range events {
		if p := e.Person; e.Kind == nexmark.KindPerson && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
			local[p.ID] = p
		}
	}
	var out []Q3Row
	for _, e := range events {
		if a := e.Auction; e.Kind == nexmark.KindAuction && a.Category == 10 {
			if p, ok := local[a.Seller]; ok {
				out = append(out, Q3Row{p.Name, p.City, p.State, a.ID})
			}
		}
	}
	return out
}

func refQ20(events []nexmark.Event) []Q20Row {
	byID := map[int64][]nexmark.Auction{}
	for _, e := range events {
		if e.Kind == nexmark.KindAuction && e.Auction.Category == 10 {
			byID[e.Auction.ID] = append(byID[e.Auction.ID], e.Auction)
		}
	}
	var out []Q20Row
	for _, e := range refBids(events) {
		b := e.Bid
		for _, a := range byID[b.Auction] {
			out = append(out, Q20Row{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra,
				a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra})
		}
	}
	return out
}

func refQ8(events []nexmark.Event) []Q8Row {
	size := int64(10 * time.Second)
	type key struct{ id, start int64 }
	sellers := map[key]bool{}
	for _, e := range events {
		if e.Kind == nexmark.KindAuction {
			sellers[key{e.Auction.Seller, floorDiv(e.Auction.DateTime, size) * size}] = true
		}
	}
	type row struct {
		id    int64
		name  string
		start int64
	}
	people := map[row]bool{} // the reference's GROUP BY id, name, window
	for _, e := range events {
		if p := e.Person; e.Kind == nexmark.KindPerson {
			people[row{p.ID, p.Name, floorDiv(p.DateTime, size) * size}] = true
		}
	}
	var out []Q8Row
	for p := range people {
		if sellers[key{p.id, p.start}] {
			out = append(out, Q8Row{p.id, p.name, p.start})
		}
	}
	return out
}

func refQ13(events []nexmark.Event) []Q13Row {
	side := map[int64]string{}
	for i := range int64(10_000) {
		side[i] = fmt.Sprint(i)
	}
	var out []Q13Row
	for _, e := range refBids(events) {
		b := e.Bid
		if v, ok := side[b.Auction%10_000]; ok {
			out = append(out, Q13Row{b.Auction, b.Bidder, b.Price, b.DateTime, v})
		}
	}
	return out
}

func refQ9(events []nexmark.Event) []Q9Row {
	byID := map[int64]nexmark.Auction{}
	for _, e := range events {
		if e.Kind == nexmark.KindAuction {
			byID[e.Auction.ID] = e.Auction
		}
	}
	best := map[int64]nexmark.Event{} // events come in number order
	for _, e := range refBids(events) {
		b := e.Bid
		a, ok := byID[b.Auction]
		if !ok || b.DateTime < a.DateTime || b.DateTime > a.Expires {
			continue
		}
		w, ok := best[a.ID]
		if !ok || b.Price > w.Bid.Price || b.Price == w.Bid.Price && b.DateTime < w.Bid.DateTime {
			best[a.ID] = e
		}
	}
	var out []Q9Row
	for id, e := range best {
		a, b := byID[id], e.Bid
		out = append(out, Q9Row{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires,
			a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return out
}

func refQ4(events []nexmark.Event) []Q4Row {
	type key struct{ id, category int64 }
	final := map[key]int64{} // MAX(price) GROUP BY id, category
	cat := map[int64]nexmark.Auction{}
	for _, e := range events {
		if e.Kind == nexmark.KindAuction {
			cat[e.Auction.ID] = e.Auction
		}
	}
	for _, e := range refBids(events) {
		a, ok := cat[e.Bid.Auction]
		if ok && e.Bid.DateTime >= a.DateTime && e.Bid.DateTime <= a.Expires {
			k := key{a.ID, a.Category}
			if p, ok := final[k]; !ok || e.Bid.Price > p {
				final[k] = e.Bid.Price
			}
		}
	}
	sum, n := map[int64]int64{}, map[int64]int64{}
	for k, p := range final {
		sum[k.category] += p
		n[k.category]++
	}
	var out []Q4Row
	for c, s := range sum {
		out = append(out, Q4Row{c, s / n[c]})
	}
	return out
}

func refQ6(events []nexmark.Event) []Q6Row {
	type won struct{ auction, seller, price, time int64 }
	var ws []won
	for _, r := range refQ9(events) {
		ws = append(ws, won{r.ID, r.Seller, r.Price, r.BidDateTime})
	}
	perSeller := map[int64][]won{}
	for _, w := range ws {
		perSeller[w.seller] = append(perSeller[w.seller], w)
	}
	var out []Q6Row
	for seller, list := range perSeller {
		sort.Slice(list, func(i, j int) bool {
			return list[i].time < list[j].time || list[i].time == list[j].time && list[i].auction < list[j].auction
		})
		for i := range list {
			var sum, n int64
			for k := max(0, i-10); k <= i; k++ { // 10 PRECEDING AND CURRENT ROW
				sum += list[k].price
				n++
			}
			out = append(out, Q6Row{seller, sum / n})
		}
	}
	return out
}
