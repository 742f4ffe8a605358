package query

import (
	"strings"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/runtime"
)

// Q0Row is a bid passed through (q0): the bid's fields as the reference
// selects them.
type Q0Row struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"date_time"`
	Extra    string `json:"extra"`
}

// Q1Row is a bid with its price converted from dollars to euros (q1).
type Q1Row struct {
	Auction int64 `json:"auction"`
	Bidder  int64 `json:"bidder"`
	// PriceMilli is 0.908 times the bid's price, in thousandths of a
	// cent: exact, as the reference's DECIMAL(23, 3).
	PriceMilli int64  `json:"price_milli"`
	DateTime   int64  `json:"date_time"`
	Extra      string `json:"extra"`
}

// Q2Row is a bid on an auction whose id is a multiple of Q2Modulus (q2).
type Q2Row struct {
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
}

// Q2Modulus is q2's selection: auction ids divisible by 123.
const Q2Modulus = 123

// Q14Row is a bid whose euro price lies in (10^6, 5·10^7) cents, with
// the part of the day it was made in and the number of 'c's in its
// padding (q14).
type Q14Row struct {
	Auction     int64  `json:"auction"`
	Bidder      int64  `json:"bidder"`
	PriceMilli  int64  `json:"price_milli"` // as Q1Row's
	BidTimeType string `json:"bid_time_type"`
	DateTime    int64  `json:"date_time"`
	Extra       string `json:"extra"`
	CCounts     int64  `json:"c_counts"`
}

// Q21Row is a bid with the id of its channel (q21): "0" to "3" for the
// hot channels Apple, Google, Facebook and Baidu, else the channel_id
// parameter of its URL; bids with neither are dropped.
type Q21Row struct {
	Auction   int64  `json:"auction"`
	Bidder    int64  `json:"bidder"`
	Price     int64  `json:"price"`
	Channel   string `json:"channel"`
	ChannelID string `json:"channel_id"`
}

// Q22Row is a bid with the third to fifth '/'-separated parts of its URL
// (q22; "" where the URL has fewer parts, the reference's null).
type Q22Row struct {
	Auction int64  `json:"auction"`
	Bidder  int64  `json:"bidder"`
	Price   int64  `json:"price"`
	Channel string `json:"channel"`
	Dir1    string `json:"dir1"`
	Dir2    string `json:"dir2"`
	Dir3    string `json:"dir3"`
}

// stateless adds one FlatMap stage on the source's workers turning each
// bid into at most one row.
func stateless[R any](src *runtime.Stream[nexmark.Event], name string, opts Options, f func(b nexmark.Bid) (R, bool)) (*runtime.Stream[R], error) {
	if err := opts.validate(false, false); err != nil {
		return nil, err
	}
	return runtime.FlatMap(src, name, func(e nexmark.Event, emit func(R)) {
		if e.Kind != nexmark.KindBid {
			return
		}
		// The bid goes by value: its address would escape through f, and
		// every event would be allocated.
		if r, ok := f(e.Bid); ok {
			emit(r)
		}
	}), nil
}

// Q0 passes every bid through (the suite's baseline: the cost of reading
// and emitting the stream).
func Q0(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q0Row], error) {
	return stateless(src, "q0", opts, q0Row)
}

func q0Row(b nexmark.Bid) (Q0Row, bool) {
	return Q0Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra}, true
}

// Q1 converts every bid's price to euros (0.908 × dollars).
func Q1(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q1Row], error) {
	return stateless(src, "q1", opts, q1Row)
}

func q1Row(b nexmark.Bid) (Q1Row, bool) {
	return Q1Row{Auction: b.Auction, Bidder: b.Bidder, PriceMilli: b.Price * 908, DateTime: b.DateTime, Extra: b.Extra}, true
}

// Q2 keeps the bids on auctions whose id is a multiple of Q2Modulus.
func Q2(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q2Row], error) {
	return stateless(src, "q2", opts, q2Row)
}

func q2Row(b nexmark.Bid) (Q2Row, bool) {
	return Q2Row{Auction: b.Auction, Price: b.Price}, b.Auction%Q2Modulus == 0
}

// Q14 keeps the bids whose euro price is in (10^6, 5·10^7) cents and
// adds the part of the day (UTC) of the bid, "dayTime" from 8:00 to
// 18:59, "nightTime" up to 6:59 and from 20:00, "otherTime" in between,
// and the count of 'c' in its Extra.
func Q14(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q14Row], error) {
	return stateless(src, "q14", opts, q14Row)
}

func q14Row(b nexmark.Bid) (Q14Row, bool) {
	milli := b.Price * 908
	if milli <= 1_000_000_000 || milli >= 50_000_000_000 {
		return Q14Row{}, false
	}
	return Q14Row{Auction: b.Auction, Bidder: b.Bidder, PriceMilli: milli, BidTimeType: bidTimeType(hourOf(b.DateTime)),
		DateTime: b.DateTime, Extra: b.Extra, CCounts: int64(strings.Count(b.Extra, "c"))}, true
}

func bidTimeType(h int) string {
	switch {
	case h >= 8 && h <= 18:
		return "dayTime"
	case h <= 6 || h >= 20:
		return "nightTime"
	}
	return "otherTime"
}

// Q21 adds each bid's channel id (see Q21Row) and drops the bids that
// have none.
func Q21(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q21Row], error) {
	return stateless(src, "q21", opts, q21Row)
}

// hotChannelIDs are q21's ids of the hot channels, by lower-case name.
var hotChannelIDs = [...][2]string{{"apple", "0"}, {"google", "1"}, {"facebook", "2"}, {"baidu", "3"}}

func q21Row(b nexmark.Bid) (Q21Row, bool) {
	r := Q21Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel}
	for _, h := range hotChannelIDs {
		if asciiLowerEqual(b.Channel, h[0]) {
			r.ChannelID = h[1]
			return r, true
		}
	}
	id, ok := ChannelIDParam(b.URL)
	r.ChannelID = id
	return r, ok
}

// ChannelIDParam is the reference's REGEXP_EXTRACT(url,
// '(&|^)channel_id=([^&]*)', 2): the value of the first channel_id
// parameter that starts the URL or follows a '&', up to the next '&';
// ok is false when there is none (the reference's null).
func ChannelIDParam(url string) (id string, ok bool) {
	const p = "channel_id="
	i := 0
	if !strings.HasPrefix(url, p) {
		j := strings.Index(url, "&"+p)
		if j < 0 {
			return "", false
		}
		i = j + 1
	}
	v := url[i+len(p):]
	if k := strings.IndexByte(v, '&'); k >= 0 {
		v = v[:k]
	}
	return v, true
}

// asciiLowerEqual reports whether s in lower case (ASCII letters only) is
// lower, which is lower-case.
func asciiLowerEqual(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// Q22 splits each bid's URL by '/' and adds its parts 3 to 5 (from 0: the
// three directories of the generator's URLs).
func Q22(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q22Row], error) {
	return stateless(src, "q22", opts, q22Row)
}

func q22Row(b nexmark.Bid) (Q22Row, bool) {
	r := Q22Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel}
	rest, ok := skipParts(b.URL, 3)
	r.Dir1, rest, ok = nextPart(rest, ok)
	r.Dir2, rest, ok = nextPart(rest, ok)
	r.Dir3, _, _ = nextPart(rest, ok)
	return r, true
}

// skipParts drops the first i '/'-separated parts of s, with their '/';
// ok is false when s has fewer than i+1 parts. A byte loop: the parts are
// short, shorter than an IndexByte call costs.
func skipParts(s string, i int) (rest string, ok bool) {
	for k := 0; i > 0; k++ {
		if k == len(s) {
			return "", false
		}
		if s[k] == '/' {
			s, k, i = s[k+1:], -1, i-1
		}
	}
	return s, true
}

// nextPart splits the first '/'-separated part off rest ("" and not ok
// when rest is not ok: there are no more parts).
func nextPart(rest string, ok bool) (string, string, bool) {
	if !ok {
		return "", "", false
	}
	for k := 0; k < len(rest); k++ {
		if rest[k] == '/' {
			return rest[:k], rest[k+1:], true
		}
	}
	return rest, "", false
}

// SplitIndex is the reference's SPLIT_INDEX(s, '/', i): the i-th part (from
// 0) of s split at every '/', or "" when s has fewer parts.
func SplitIndex(s string, i int) string {
	part, _, _ := nextPart(skipParts(s, i))
	return part
}
