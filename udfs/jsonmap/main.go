// Command jsonmap is a UDF module with one map function over Nexmark bids in
// JSON, bid_eur, written with the Go SDK's JSON scanner and writer
// (sdk/go/json). Its README says exactly what it writes; udfs/jsonmap-std
// is the same function with encoding/json, for comparison.
package main

import (
	"errors"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

func init() {
	udf.Map("bid_eur", bidEUR)
}

// fields are the members bid_eur reads, in one pass (json.Lookup); values
// receives them, channel is the buffer the channel is unescaped into and
// out the one the output is built in, all reused for every record: the SDK
// copies the output when bidEUR returns.
var (
	fields  = []string{"auction", "bidder", "price", "channel", "dateTime"}
	values  = make([]json.Value, len(fields))
	channel []byte
	out     json.Writer
)

// bidEUR reads a bid's auction, bidder, price (in dollar cents), channel
// and dateTime and writes them as a new object, with the price in euro
// cents (price * 0.908) as price_eur.
func bidEUR(r udf.Record) (udf.Record, error) {
	json.Lookup(r.Value, fields, values)
	auction, ok := values[0].Int()
	if !ok {
		return r, errors.New(`no integer "auction"`)
	}
	bidder, ok := values[1].Int()
	if !ok {
		return r, errors.New(`no integer "bidder"`)
	}
	price, ok := values[2].Int()
	if !ok {
		return r, errors.New(`no integer "price"`)
	}
	if channel, ok = values[3].String(channel); !ok {
		return r, errors.New(`no string "channel"`)
	}
	dateTime, ok := values[4].Int()
	if !ok {
		return r, errors.New(`no integer "dateTime"`)
	}
	out.Reset()
	out.BeginObject()
	out.Key("auction")
	out.Int(auction)
	out.Key("bidder")
	out.Int(bidder)
	out.Key("price_eur")
	out.Float(float64(price) * 0.908)
	out.Key("channel")
	out.StringBytes(channel)
	out.Key("dateTime")
	out.Int(dateTime)
	out.EndObject()
	r.Value = out.Bytes()
	return r, nil
}

// main never runs: the module is a reactor.
func main() {}
