package nexmark

import (
	"encoding/json"
	"reflect"
	"testing"
)

// auctionHouse is a small hand-written stream: three persons, five auctions
// and six bids, times in ms from 0.
var auctionHouse = []Event{
	PersonEvent(Person{ID: 1, Name: "Ann", City: "Bend", State: "OR", DateTime: 1000}),
	AuctionEvent(Auction{ID: 10, Seller: 1, Category: 10, DateTime: 2000, Expires: 20000}),
	BidEvent(Bid{Auction: 10, Bidder: 100, Price: 500, DateTime: 2500, Extra: "b1"}),
	PersonEvent(Person{ID: 3, Name: "Cy", City: "Kent", State: "WA", DateTime: 3000}),
	AuctionEvent(Auction{ID: 12, Seller: 3, Category: 10, DateTime: 4000, Expires: 30000}),
	AuctionEvent(Auction{ID: 123, Seller: 1, Category: 11, DateTime: 5000, Expires: 9000}),
	AuctionEvent(Auction{ID: 13, Seller: 2, Category: 12, DateTime: 6000, Expires: 7000}),
	BidEvent(Bid{Auction: 123, Bidder: 100, Price: 300, DateTime: 8000, Extra: "b3"}),
	BidEvent(Bid{Auction: 10, Bidder: 101, Price: 700, DateTime: 9000, Extra: "b2"}),
	BidEvent(Bid{Auction: 123, Bidder: 100, Price: 900, DateTime: 10000, Extra: "b4"}),
	PersonEvent(Person{ID: 2, Name: "Bob", City: "Boise", State: "ID", DateTime: 12000}),
	AuctionEvent(Auction{ID: 11, Seller: 2, Category: 10, DateTime: 13000, Expires: 15000}),
	BidEvent(Bid{Auction: 12, Bidder: 102, Price: 251, DateTime: 14000, Extra: "b6"}),
	BidEvent(Bid{Auction: 11, Bidder: 101, Price: 700, DateTime: 20000, Extra: "b5"}),
}

func bidsAt(bs ...Bid) []Event {
	var out []Event
	for _, b := range bs {
		out = append(out, BidEvent(b))
	}
	return out
}

func TestQueries(t *testing.T) {
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"q0", Q0(auctionHouse), []Q0Row{
			{10, 100, 500, 2500, "b1"}, {123, 100, 300, 8000, "b3"}, {10, 101, 700, 9000, "b2"},
			{123, 100, 900, 10000, "b4"}, {12, 102, 251, 14000, "b6"}, {11, 101, 700, 20000, "b5"},
		}},
		{"q1", Q1(auctionHouse), []Q1Row{
			{10, 100, 454000, 2500, "b1"}, {123, 100, 272400, 8000, "b3"}, {10, 101, 635600, 9000, "b2"},
			{123, 100, 817200, 10000, "b4"}, {12, 102, 227908, 14000, "b6"}, {11, 101, 635600, 20000, "b5"},
		}},
		{"q2", Q2(auctionHouse), []Q2Row{{123, 300}, {123, 900}}},
		// Cy is from WA; auction 13 is not in category 10.
		{"q3", Q3(auctionHouse), []Q3Row{{"Ann", "Bend", "OR", 10}, {"Bob", "Boise", "ID", 11}}},
		// Auction 10: 700; 12: 251; 123: 300 (900 came after it
		// expired); 11 has no bid before it expired. (700+251)/2
		// truncates to 475.
		{"q4", Q4(auctionHouse), []Q4Row{{10, 475}, {11, 300}}},
		{"q5", Q5(auctionHouse), []Q5Row{
			{-6000, 4000, 10, 1}, {-4000, 6000, 10, 1}, {-2000, 8000, 10, 1}, {0, 10000, 10, 2},
			{2000, 12000, 10, 2}, {2000, 12000, 123, 2}, {4000, 14000, 123, 2}, {6000, 16000, 123, 2},
			{8000, 18000, 123, 2}, {10000, 20000, 12, 1}, {10000, 20000, 123, 1}, {12000, 22000, 11, 1},
			{12000, 22000, 12, 1}, {14000, 24000, 11, 1}, {14000, 24000, 12, 1}, {16000, 26000, 11, 1},
			{18000, 28000, 11, 1}, {20000, 30000, 11, 1},
		}},
		{"q5 with 4 s windows every 4 s", Q5With(auctionHouse, 4000, 4000), []Q5Row{
			{0, 4000, 10, 1}, {8000, 12000, 123, 2}, {12000, 16000, 12, 1}, {20000, 24000, 11, 1},
		}},
		{"q7", Q7(auctionHouse), []Q7Row{
			{10000, 10, 101, 700, 9000, "b2"}, {20000, 123, 100, 900, 10000, "b4"}, {30000, 11, 101, 700, 20000, "b5"},
		}},
		// A bid at a window's end is in the next window and, by the
		// query's BETWEEN, matches the maximum of the one it ends too.
		{"q7 at a window's end", Q7(bidsAt(
			Bid{Auction: 1, Bidder: 1, Price: 50, DateTime: 5000},
			Bid{Auction: 2, Bidder: 2, Price: 50, DateTime: 10000},
			Bid{Auction: 3, Bidder: 3, Price: 40, DateTime: 12000},
		)), []Q7Row{{10000, 1, 1, 50, 5000, ""}, {10000, 2, 2, 50, 10000, ""}, {20000, 2, 2, 50, 10000, ""}}},
		// Ann opened two auctions in her window, counted once; Bob's
		// auction 13 is in a window before he joined.
		{"q8", Q8(auctionHouse), []Q8Row{{1, "Ann", 0}, {3, "Cy", 0}, {2, "Bob", 10000}}},
		{"q11", Q11(auctionHouse), []Q11Row{
			{100, 3, 2500, 20000}, {101, 1, 9000, 19000}, {101, 1, 20000, 30000}, {102, 1, 14000, 24000},
		}},
		// Sessions that touch merge; one past the end starts another.
		{"q11 touching sessions", Q11(bidsAt(
			Bid{Bidder: 7, DateTime: 10000}, Bid{Bidder: 7, DateTime: 0}, Bid{Bidder: 7, DateTime: 20001},
		)), []Q11Row{{7, 2, 0, 20000}, {7, 1, 20001, 30001}}},
		{"nothing in, nothing out", Q5(nil), []Q5Row(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got  %v\nwant %v", tt.got, tt.want)
			}
		})
	}
}

// TestQueriesOverJSON runs the queries over the hand-written events
// written as JSON and decoded again: the same rows.
func TestQueriesOverJSON(t *testing.T) {
	var decoded []Event
	for _, e := range auctionHouse {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		decoded = append(decoded, d)
	}
	if !reflect.DeepEqual(Q4(decoded), Q4(auctionHouse)) || !reflect.DeepEqual(Q8(decoded), Q8(auctionHouse)) {
		t.Fatal("the decoded events give other results")
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ json, want string }{
		{`{"event_type":0,"person":null,"auction":null,"bid":null,"dateTime":0}`,
			"nexmark: event with 0 of person, auction and bid set, want 1"},
		{`{"event_type":1,"person":{"id":1,"dateTime":5},"auction":null,"bid":null,"dateTime":5}`,
			"nexmark: event_type 1 does not match the member set"},
		{`{"event_type":2,"bid":{"auction":1,"dateTime":5},"dateTime":6}`,
			"nexmark: event dateTime 6 differs from its member's, 5"},
		{`{"event_type":"bid"}`,
			"nexmark: json: cannot unmarshal string into Go struct field Event.event_type of type nexmark.Kind"},
	}
	for _, tt := range tests {
		if _, err := Decode([]byte(tt.json)); err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%s) = %v, want %s", tt.json, err, tt.want)
		}
	}
}
