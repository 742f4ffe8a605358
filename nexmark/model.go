package nexmark

// Kind is the kind of an event: a new person, a new auction or a bid.
type Kind uint8

// The event kinds.
const (
	KindPerson Kind = iota
	KindAuction
	KindBid
)

// String returns "person", "auction" or "bid".
func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return "kind(?)"
}

// Person is a new person registering to buy or sell (the model's Person).
// Its strings come from fixed tables and shared texts (see the package
// documentation): they are never built per event.
type Person struct {
	ID         int64 // from FirstPersonID up, in creation order
	Name       string
	Email      string
	CreditCard string // four groups of four digits
	City       string
	State      string
	DateTime   int64 // the event time, ns since the Unix epoch
	Extra      string
}

// Auction is a new auction (the model's Auction). Prices are in cents.
type Auction struct {
	ID          int64 // from FirstAuctionID up, in creation order
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64 // InitialBid plus a second price
	DateTime    int64 // the event time, ns since the Unix epoch
	Expires     int64 // DateTime plus the auction's length, ns
	Seller      int64 // a Person.ID
	Category    int64 // FirstCategoryID to FirstCategoryID+NumCategories-1
	Extra       string
}

// Bid is a bid on an auction (the model's Bid). Price is in cents.
type Bid struct {
	Auction  int64 // an Auction.ID
	Bidder   int64 // a Person.ID
	Price    int64
	Channel  string
	URL      string
	DateTime int64 // the event time, ns since the Unix epoch
	Extra    string
}

// Event is one event of the stream: its number, time and kind, and the
// Person, Auction or Bid that Kind names; the other two are zero.
type Event struct {
	// Number is the event's position in the whole stream, from 0: every
	// id in the event is a function of it (LastPersonID, LastAuctionID).
	Number int64
	// Time is the event time, ns since the Unix epoch (TimeAt(Number)).
	Time    int64
	Kind    Kind
	Person  Person
	Auction Auction
	Bid     Bid
}

// EventTime returns e.Time: the event-time extractor a runtime source
// takes (runtime.EventTime(nexmark.EventTime)).
func EventTime(e Event) int64 { return e.Time }
