// Command jsonmap-std is udfs/jsonmap's bid_eur written with encoding/json
// instead of the SDK's JSON scanner: the baseline of the benchmark that
// compares them (udfs/languages_bench_test.go, BenchmarkJSONMap).
package main

import (
	"encoding/json"
	"errors"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Map("bid_eur", bidEUR)
}

// bid is a Nexmark bid; pointers tell a missing field from a zero one.
type bid struct {
	Auction  *int64  `json:"auction"`
	Bidder   *int64  `json:"bidder"`
	Price    *int64  `json:"price"`
	Channel  *string `json:"channel"`
	URL      string  `json:"url"`
	DateTime *int64  `json:"dateTime"`
	Extra    string  `json:"extra"`
}

// bidOut is the output of bidEUR, in udfs/jsonmap's order.
type bidOut struct {
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	PriceEUR float64 `json:"price_eur"`
	Channel  string  `json:"channel"`
	DateTime int64   `json:"dateTime"`
}

// bidEUR decodes a bid and encodes its auction, bidder, price in euro cents,
// channel and dateTime.
func bidEUR(r udf.Record) (udf.Record, error) {
	var b bid
	if err := json.Unmarshal(r.Value, &b); err != nil {
		return r, err
	}
	if b.Auction == nil || b.Bidder == nil || b.Price == nil || b.Channel == nil || b.DateTime == nil {
		return r, errors.New("missing field")
	}
	v, err := json.Marshal(bidOut{*b.Auction, *b.Bidder, float64(*b.Price) * 0.908, *b.Channel, *b.DateTime})
	if err != nil {
		return r, err
	}
	r.Value = v
	return r, nil
}

// main never runs: the module is a reactor.
func main() {}
