package nexmark

import (
	"reflect"
	"testing"
)

func TestMoreQueries(t *testing.T) {
	b2 := BidRow{10, 101, 700, "", "", 9000, "b2"}
	b1 := BidRow{10, 100, 500, "", "", 2500, "b1"}
	b3 := BidRow{123, 100, 300, "", "", 8000, "b3"}
	b4 := BidRow{123, 100, 900, "", "", 10000, "b4"}
	b5 := BidRow{11, 101, 700, "", "", 20000, "b5"}
	b6 := BidRow{12, 102, 251, "", "", 14000, "b6"}
	const nine = 9 * 3_600_000 // 09:00 UTC on the first day
	tests := []struct {
		name string
		got  any
		want any
	}{
		// Auction 123's bid of 900 came after it expired; 13 and 11 had
		// no bid while open.
		{"q9", Q9(auctionHouse), []Q9Row{
			{10, "", "", 0, 0, 2000, 20000, 1, 10, "", 10, 101, 700, 9000, "b2"},
			{12, "", "", 0, 0, 4000, 30000, 3, 10, "", 12, 102, 251, 14000, "b6"},
			{123, "", "", 0, 0, 5000, 9000, 1, 11, "", 123, 100, 300, 8000, "b3"},
		}},
		{"q9 equal prices: the earlier wins", Q9([]Event{
			AuctionEvent(Auction{ID: 1, DateTime: 0, Expires: 100}),
			BidEvent(Bid{Auction: 1, Bidder: 2, Price: 5, DateTime: 50}),
			BidEvent(Bid{Auction: 1, Bidder: 3, Price: 5, DateTime: 40}),
		}), []Q9Row{{ID: 1, Expires: 100, Auction: 1, Bidder: 3, Price: 5, BidDateTime: 40}}},
		{"q10", Q10(bidsAt(Bid{Auction: 1, Bidder: 2, Price: 3, DateTime: DefaultBaseTime, Extra: "x"})),
			[]Q10Row{{1, 2, 3, DefaultBaseTime, "x", "2023-11-14", "22:13"}}},
		{"q12", Q12(auctionHouse), []Q12Row{{100, 3}, {101, 2}, {102, 1}}},
		{"q13", Q13(bidsAt(Bid{Auction: 12345, Bidder: 1, Price: 2, DateTime: 3})), []Q13Row{{12345, 1, 2, 3, "2345"}}},
		{"q14", Q14(bidsAt(
			Bid{Auction: 1, Price: 2_000_000, DateTime: nine, Extra: "cacb"},
			Bid{Auction: 2, Price: 1_101_322, DateTime: 19 * 3_600_000},
			Bid{Auction: 3, Price: 1_101_321, DateTime: 0},
			Bid{Auction: 4, Price: 55_066_079, DateTime: 0},
			Bid{Auction: 5, Price: 55_066_080, DateTime: 0},
		)), []Q14Row{
			{4, 0, 49_999_999_732, "nightTime", 0, "", 0},
			{1, 0, 1_816_000_000, "dayTime", nine, "cacb", 2},
			{2, 0, 1_000_000_376, "otherTime", 19 * 3_600_000, "", 0},
		}},
		{"q15", Q15(auctionHouse), []Q15Row{{"1970-01-01", BidStats{[4]int64{6, 6, 0, 0}, [4]int64{3, 3, 0, 0}, [4]int64{4, 4, 0, 0}}}}},
		{"q16 ranks", Q16(bidsAt(
			Bid{Auction: 1, Bidder: 1, Price: 9_999, Channel: "A", DateTime: 60_000},
			Bid{Auction: 1, Bidder: 1, Price: 10_000, Channel: "A", DateTime: 0},
			Bid{Auction: 2, Bidder: 1, Price: 1_000_000, Channel: "A", DateTime: 0},
			Bid{Auction: 2, Bidder: 2, Price: 5, Channel: "B", DateTime: 0},
		)), []Q16Row{
			{"A", "1970-01-01", "00:01", BidStats{[4]int64{3, 1, 1, 1}, [4]int64{1, 1, 1, 1}, [4]int64{2, 1, 1, 1}}},
			{"B", "1970-01-01", "00:00", BidStats{[4]int64{1, 1, 0, 0}, [4]int64{1, 1, 0, 0}, [4]int64{1, 1, 0, 0}}},
		}},
		{"q17", Q17(auctionHouse), []Q17Row{
			{10, "1970-01-01", 2, 2, 0, 0, 500, 700, 600, 1200},
			{11, "1970-01-01", 1, 1, 0, 0, 700, 700, 700, 700},
			{12, "1970-01-01", 1, 1, 0, 0, 251, 251, 251, 251},
			{123, "1970-01-01", 2, 2, 0, 0, 300, 900, 600, 1200},
		}},
		{"q18", Q18(auctionHouse), []BidRow{b1, b2, b5, b6, b4}},
		{"q19", Q19(auctionHouse), []Q19Row{{b2, 1}, {b1, 2}, {b5, 1}, {b6, 1}, {b4, 1}, {b3, 2}}},
		{"q20", Q20(auctionHouse), []Q20Row{
			{10, 100, 500, "", "", 2500, "b1", "", "", 0, 0, 2000, 20000, 1, 10, ""},
			{10, 101, 700, "", "", 9000, "b2", "", "", 0, 0, 2000, 20000, 1, 10, ""},
			{11, 101, 700, "", "", 20000, "b5", "", "", 0, 0, 13000, 15000, 2, 10, ""},
			{12, 102, 251, "", "", 14000, "b6", "", "", 0, 0, 4000, 30000, 3, 10, ""},
		}},
		{"q21", Q21(bidsAt(
			Bid{Auction: 1, Channel: "APPLE", URL: "channel_id=7"},
			Bid{Auction: 2, Channel: "channel-1", URL: "https://x/y?a=1&channel_id=42&b=2"},
			Bid{Auction: 3, Channel: "channel-2", URL: "https://x/y?a=1"},
			Bid{Auction: 4, Channel: "channel-3", URL: "channel_id="},
		)), []Q21Row{{1, 0, 0, "APPLE", "0"}, {2, 0, 0, "channel-1", "42"}, {4, 0, 0, "channel-3", ""}}},
		{"q22", Q22(bidsAt(
			Bid{Auction: 1, URL: "https://www.nexmark.com/a/b/c/item.htm"},
			Bid{Auction: 2, URL: "https://x/a"},
		)), []Q22Row{{1, 0, 0, "", "a", "b", "c"}, {2, 0, 0, "", "a", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", tt.got, tt.want)
			}
		})
	}
}

// TestParse checks that Parse reads the generator's events as Decode does,
// and falls back to it for other JSON.
func TestParse(t *testing.T) {
	g, err := New(Config{Seed: 11, AvgPersonSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(3000) {
		data := g.AppendEvent(nil, i)
		want, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(data)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d: %s\nParse %+v, %v\nDecode %+v", i, data, got, err, want)
		}
	}
	for _, data := range []string{
		`{"event_type":2,"bid":{"auction":1,"channel":"a\"b","dateTime":5},"dateTime":5}`,
		` {"event_type":2, "bid":{"auction":1,"dateTime":5},"dateTime":5}`,
		`{"event_type":2,"bid":{"auction":1,"dateTime":5,"dateTime":5},"dateTime":5}`,
		`{"event_type":2,"bid":{"Auction":1,"dateTime":5},"dateTime":5}`,
		`{"event_type":2,"bid":{"auction":1.0,"dateTime":5},"dateTime":5}`,
		`{"event_type":2,"bid":null,"dateTime":5}`,
		`{"event_type":1,"bid":{"dateTime":5},"dateTime":5}`,
		`{"event_type":2,"bid":{"dateTime":5},"dateTime":5}x`,
	} {
		want, werr := Decode([]byte(data))
		got, gerr := Parse([]byte(data))
		if !reflect.DeepEqual(got, want) || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("%s:\nParse  %+v, %v\nDecode %+v, %v", data, got, gerr, want, werr)
		}
	}
}
