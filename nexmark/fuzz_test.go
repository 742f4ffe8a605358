package nexmark

import (
	"errors"
	"testing"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/stream"
)

// FuzzConfig: New never panics; it refuses a Config with an error wrapping
// ErrInvalidParameter, or its first events follow the kind rule, have
// non-decreasing times and name only persons and auctions at most IDLead
// ids ahead.
func FuzzConfig(f *testing.F) {
	d := DefaultConfig()
	f.Add(uint64(1), int64(0), d.EventsPerSecond, int64(0), 1, 3, 46, 2, 4, 4, 100, int64(1000), 0, 200, 500, 100)
	f.Add(uint64(2), int64(9e18), int64(1), int64(5), 0, 1, 1, 1, 1, 1, 0, int64(1), 10, 0, 0, 0)
	f.Add(uint64(3), int64(-1), int64(-5), int64(-1), -1, 7, 2, 0, 0, 3, -1, int64(0), -1, -1, 1<<20, 7)
	f.Fuzz(func(t *testing.T, seed uint64, first, rate, num int64, pp, ap, bp, ha, hs, hb, inflight int, active int64, lead, avgP, avgA, avgB int) {
		c := Config{Seed: seed, FirstEventTime: first, EventsPerSecond: rate, NumEvents: num,
			PersonProportion: pp, AuctionProportion: ap, BidProportion: bp,
			HotAuctionRatio: ha, HotSellersRatio: hs, HotBiddersRatio: hb,
			NumInFlightAuctions: inflight, NumActivePeople: active, IDLead: lead,
			AvgPersonBytes: avgP, AvgAuctionBytes: avgA, AvgBidBytes: avgB}
		g, err := New(c)
		if err != nil {
			if !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("%+v: %v does not wrap ErrInvalidParameter", c, err)
			}
			return
		}
		buf := make([]Event, 300)
		n := g.Fill(buf)
		if want := min(int64(len(buf)), g.Len()); int64(n) != want {
			t.Fatalf("%+v: Fill gave %d events, want %d", c, n, want)
		}
		for i, e := range buf[:n] {
			if e.Kind != g.KindAt(e.Number) || e.Number != int64(i) || i > 0 && e.Time < buf[i-1].Time {
				t.Fatalf("%+v: event %d: %+v", c, i, e)
			}
			lastP, lastA := g.LastPersonID(e.Number)+int64(lead), g.LastAuctionID(e.Number)+int64(lead)
			if e.Kind == KindAuction && e.Auction.Seller > lastP || e.Kind == KindBid && (e.Bid.Bidder > lastP || e.Bid.Auction > lastA) {
				t.Fatalf("%+v: event %d names a later id: %+v", c, i, e)
			}
		}
	})
}

// FuzzSeek: Seek never panics on any bytes; it refuses them with an
// error wrapping stream.ErrPosition and leaves the generator unchanged,
// or the generator continues at the position, which AppendPosition then
// writes back.
func FuzzSeek(f *testing.F) {
	f.Add([]byte{})
	f.Add(wire.AppendUvarint(nil, 7))
	f.Add(wire.AppendUvarint(nil, 1000))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	c := DefaultConfig()
	c.NumEvents = 1000
	f.Fuzz(func(t *testing.T, pos []byte) {
		g, err := NewPart(c, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		before := g.NextNumber()
		if err := g.Seek(pos); err != nil {
			if !errors.Is(err, stream.ErrPosition) || g.NextNumber() != before {
				t.Fatalf("Seek(%x): %v, next %d (was %d)", pos, err, g.NextNumber(), before)
			}
			return
		}
		back, _ := g.AppendPosition(nil)
		h, _ := NewPart(c, 1, 3)
		if err := h.Seek(back); err != nil || h.NextNumber() != g.NextNumber() {
			t.Fatalf("Seek(%x) then AppendPosition %x: %v", pos, back, err)
		}
		var e [1]Event
		if g.Fill(e[:]) == 1 && (e[0].Number%3 != 1 || e[0].Number >= 1000) {
			t.Fatalf("Seek(%x): next event %d", pos, e[0].Number)
		}
	})
}
