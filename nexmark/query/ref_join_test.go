package query

import "github.com/skewerhq/skewer/nexmark"

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
