package json_test

import (
	stdjson "encoding/json"
	"testing"

	"wasmstream.io/platform/sdk/go/json"
)

// BenchmarkBid reads five fields of a bid and writes a new object, natively.
func BenchmarkBid(b *testing.B) {
	var w json.Writer
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		auction, _ := json.GetInt(bid, "auction")
		bidder, _ := json.GetInt(bid, "bidder")
		price, _ := json.GetInt(bid, "price")
		buf, _ = json.GetString(buf, bid, "channel")
		dateTime, _ := json.GetInt(bid, "dateTime")
		w.Reset()
		w.BeginObject()
		w.Key("auction")
		w.Int(auction)
		w.Key("bidder")
		w.Int(bidder)
		w.Key("price_eur")
		w.Float(float64(price) * 0.908)
		w.Key("channel")
		w.StringBytes(buf)
		w.Key("dateTime")
		w.Int(dateTime)
		w.EndObject()
	}
}

// BenchmarkBidEncodingJSON is BenchmarkBid with encoding/json.
func BenchmarkBidEncodingJSON(b *testing.B) {
	type in struct {
		Auction, Bidder, Price int64
		Channel, URL           string
		DateTime               int64 `json:"dateTime"`
		Extra                  string
	}
	type out struct {
		Auction  int64   `json:"auction"`
		Bidder   int64   `json:"bidder"`
		PriceEUR float64 `json:"price_eur"`
		Channel  string  `json:"channel"`
		DateTime int64   `json:"dateTime"`
	}
	b.ReportAllocs()
	for b.Loop() {
		var v in
		if err := stdjson.Unmarshal(bid, &v); err != nil {
			b.Fatal(err)
		}
		if _, err := stdjson.Marshal(out{v.Auction, v.Bidder, float64(v.Price) * 0.908, v.Channel, v.DateTime}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetFirst(b *testing.B) {
	for b.Loop() {
		json.GetInt(bid, "auction")
	}
}

func BenchmarkGetLast(b *testing.B) {
	for b.Loop() {
		json.GetInt(bid, "dateTime")
	}
}

func BenchmarkWrite(b *testing.B) {
	var w json.Writer
	for b.Loop() {
		w.Reset()
		w.BeginObject()
		w.Key("auction")
		w.Int(1000)
		w.Key("bidder")
		w.Int(2001)
		w.Key("price_eur")
		w.Float(12345 * 0.908)
		w.Key("channel")
		w.String("Google")
		w.Key("dateTime")
		w.Int(1700000000000)
		w.EndObject()
	}
}
