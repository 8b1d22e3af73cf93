package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func TestBidEUR(t *testing.T) {
	in := []string{
		`{"auction":1000,"bidder":2001,"price":12345,"channel":"Google","url":"https://www.nexmark.com/a/b","dateTime":1700000000000,"extra":""}`,
		` { "extra" : {"price": 1, "x": ["}"]}, "dateTime" : -5 , "channel" : "A\"\\\u00e9\ud83d\ude00\n\u0001" , "price" : 0, "bidder" : -1, "auction" : 7 } `,
		`{"auction":1,"bidder":2,"price":1.5,"channel":"x","dateTime":3}`,
		`{"auction":1,"bidder":2,"price":3,"channel":4,"dateTime":3}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"x"}`,
		`{"auction":1,"bidder":2,"price":3,"channel":"x","dateTime":3`,
		`not json`,
	}
	recs := make([]udf.Record, len(in))
	for i, v := range in {
		recs[i] = udf.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(i)}
	}
	got, err := udf.Invoke("bid_eur", recs)
	if err != nil {
		t.Fatal(err)
	}
	want := []udf.Output{
		{Index: 0, Record: udf.Record{Key: []byte("k"), Value: []byte(`{"auction":1000,"bidder":2001,"price_eur":11209.26,"channel":"Google","dateTime":1700000000000}`)}},
		{Index: 1, Record: udf.Record{Key: []byte("k"), Value: []byte(`{"auction":7,"bidder":-1,"price_eur":0,"channel":"A\"\\é😀\n\u0001","dateTime":-5}`), Timestamp: 1}},
		{Index: 2, Err: `no integer "price"`},
		{Index: 3, Err: `no string "channel"`},
		{Index: 4, Err: `no integer "dateTime"`},
		{Index: 5, Err: `no integer "dateTime"`},
		{Index: 6, Err: `no integer "auction"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}
