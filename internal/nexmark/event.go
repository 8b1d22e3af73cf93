package nexmark

import (
	"encoding/json"
	"fmt"
)

// Person is a new person, as the generator writes it. Times are
// milliseconds since the epoch.
type Person struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
	Extra        string `json:"extra"`
}

// Auction is a new auction. Prices are in cents; bids at or after Expires
// are too late.
type Auction struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
}

// Bid is a bid for an auction, in cents.
type Bid struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	URL      string `json:"url"`
	DateTime int64  `json:"dateTime"`
	Extra    string `json:"extra"`
}

// Event is one event: exactly one of Person, Auction and Bid is set, the
// one Type names. DateTime is the event time, that of the member set.
type Event struct {
	Type     Kind     `json:"event_type"`
	Person   *Person  `json:"person"`
	Auction  *Auction `json:"auction"`
	Bid      *Bid     `json:"bid"`
	DateTime int64    `json:"dateTime"`
}

// Decode reads an event from its JSON and checks that it is one of a kind.
func Decode(data []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, fmt.Errorf("nexmark: %w", err)
	}
	set := 0
	for _, p := range []bool{e.Person != nil, e.Auction != nil, e.Bid != nil} {
		if p {
			set++
		}
	}
	var at int64
	switch {
	case set != 1:
		return Event{}, fmt.Errorf("nexmark: event with %d of person, auction and bid set, want 1", set)
	case e.Type == KindPerson && e.Person != nil:
		at = e.Person.DateTime
	case e.Type == KindAuction && e.Auction != nil:
		at = e.Auction.DateTime
	case e.Type == KindBid && e.Bid != nil:
		at = e.Bid.DateTime
	default:
		return Event{}, fmt.Errorf("nexmark: event_type %d does not match the member set", e.Type)
	}
	if e.DateTime != at {
		return Event{}, fmt.Errorf("nexmark: event dateTime %d differs from its member's, %d", e.DateTime, at)
	}
	return e, nil
}

// PersonEvent, AuctionEvent and BidEvent wrap an entity as an event, for
// building event lists by hand.
func PersonEvent(p Person) Event { return Event{Type: KindPerson, Person: &p, DateTime: p.DateTime} }

// AuctionEvent wraps a as an event.
func AuctionEvent(a Auction) Event {
	return Event{Type: KindAuction, Auction: &a, DateTime: a.DateTime}
}

// BidEvent wraps b as an event.
func BidEvent(b Bid) Event { return Event{Type: KindBid, Bid: &b, DateTime: b.DateTime} }
