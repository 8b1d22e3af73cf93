package json_test

import (
	"fmt"

	"wasmstream.io/platform/sdk/go/json"
)

// This reads a few fields of a bid and builds a new object from them, as a
// map function over JSON records does.
func Example() {
	bid := []byte(`{"auction":1000,"bidder":2001,"price":12345,"channel":"Goo\"gle","dateTime":1700000000000,"extra":{"a":[1]}}`)
	auction, _ := json.GetInt(bid, "auction")
	price, ok := json.GetInt(bid, "price")
	if !ok {
		fmt.Println("no price")
		return
	}
	var buf []byte
	buf, _ = json.GetString(buf, bid, "channel")
	extra, kind, _ := json.Get(bid, "extra", "a", "0")

	var w json.Writer
	w.BeginObject()
	w.Key("auction")
	w.Int(auction)
	w.Key("price_eur")
	w.Float(float64(price) * 0.908)
	w.Key("channel")
	w.StringBytes(buf)
	w.Key("first_extra")
	w.Raw(extra)
	w.EndObject()
	fmt.Printf("%s (%v)\n", buf, kind)
	fmt.Println(string(w.Bytes()))
	// Output:
	// Goo"gle (number)
	// {"auction":1000,"price_eur":11209.26,"channel":"Goo\"gle","first_extra":1}
}
