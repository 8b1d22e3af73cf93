package udfs

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

// nexmarkBids are n Nexmark-like bids in JSON, as the benchmark's and the
// cross-language test's records: prices of every magnitude, a few channels
// (one with escapes), urls and an extra field.
func nexmarkBids(n int, seed int64) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	channels := []string{"Google", "Facebook", "Baidu", "Apple", "channel-1234"}
	bids := make([][]byte, n)
	for i := range bids {
		price := rng.Int63n(100_000)
		if i%7 == 0 {
			price = rng.Int63n(1 << 50)
		}
		ch := channels[rng.Intn(len(channels))]
		bids[i] = fmt.Appendf(nil, `{"auction":%d,"bidder":%d,"price":%d,"channel":"%s","url":"https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d","dateTime":%d,"extra":"%s"}`,
			1000+rng.Intn(1000), 2000+rng.Intn(10000), price, ch, ch, rng.Intn(1<<20), 1_700_000_000_000+int64(i)*10, "")
	}
	return bids
}

// jsonmapCases are records that cover what bid_eur reads and how it fails.
var jsonmapCases = []string{
	` { "extra" : {"price": 1, "x": ["}", {"auction": 5}]}, "dateTime" : -5 , "channel" : "A\"\\\/\u00e9\ud83d\ude00\n\u0001\u001f\b\f\r\t" , "price" : 0, "bidder" : -1, "auction" : 7 } `,
	`{"auction":-9223372036854775808,"bidder":9223372036854775807,"price":-12345,"channel":"x\ud800y\udc00z","dateTime":0}`,
	`{"auction":1,"bidder":2,"price":123456789012345678,"channel":"caf\u00E9 \u4e2d\u6587","dateTime":3}`,
	`{"a\u0075ction":1,"bi\u0064der":2,"pric\u0065":3,"ch\u0061nnel":"c","d\u0061teTime":4}`,
	`{"auction":1,"auction":2,"bidder":2,"price":3,"channel":"first","channel":"second","dateTime":4}`,
	"{\"auction\":1,\"bidder\":2,\"price\":1,\"channel\":\"raw \xff\xfe bytes and \xe2\x82\xac\",\"dateTime\":4}",
	`{"list":[1,2.5e-3,-0.0E+1,[],{},"]"],"auction":1,"bidder":2,"price":7,"channel":"","dateTime":4,"url":null,"t":true,"f":false}`,
	`{"auction":1,"bidder":2,"price":1.5,"channel":"x","dateTime":3}`,
	`{"auction":1,"bidder":2,"price":1e3,"channel":"x","dateTime":3}`,
	`{"auction":1,"bidder":2,"price":3,"channel":4,"dateTime":3}`,
	`{"auction":1,"bidder":2,"price":3,"channel":"bad \x escape","dateTime":3}`,
	`{"auction":1,"bidder":2,"price":3,"channel":"x"}`,
	`{"auction":1,"bidder":2,"price":3,"channel":"x","dateTime":3`,
	`{"auction":1,"bidder":2,"price":9223372036854775808,"channel":"x","dateTime":3}`,
	`{"auction":01,"bidder":2,"price":3,"channel":"x","dateTime":3}`,
	`{"auction" 1}`,
	`{"extra":"unterminated,"auction":1}`,
	`{"extra":[1,2,"auction":1}`,
	`[{"auction":1}]`,
	`not json`,
	``,
}

// TestJSONMapAcrossLanguages runs bid_eur of udfs/jsonmap (Go) and of its
// Rust, C and AssemblyScript twins over the same records, and checks that
// their output entries are byte for byte the same; and that the
// encoding/json twin (udfs/jsonmap-std) writes exactly the same for the
// benchmark's bids.
func TestJSONMapAcrossLanguages(t *testing.T) {
	ctx := context.Background()
	var cases []abi.Record
	for i, v := range jsonmapCases {
		cases = append(cases, abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(i),
			Headers: []abi.Header{{Name: []byte("h"), Value: []byte("1")}}})
	}
	var bids []abi.Record
	for i, v := range nexmarkBids(3000, 1) {
		bids = append(bids, abi.Record{Value: v, Timestamp: int64(i)})
	}
	goMap := instantiate(t, "jsonmap")
	want, err := goMap.run(ctx, "bid_eur", cases)
	if err != nil {
		t.Fatal(err)
	}
	wantBids, err := goMap.run(ctx, "bid_eur", bids)
	if err != nil {
		t.Fatal(err)
	}
	// Spot checks of the reference itself; the Go module's unit tests
	// check more.
	if got, w := string(want[0].Value), `{"auction":7,"bidder":-1,"price_eur":0,"channel":"A\"\\/é😀\n\u0001\u001f\b\f\r\t","dateTime":-5}`; got != w {
		t.Fatalf("case 0: %s, want %s", got, w)
	}
	if got, w := string(want[2].Value), `{"auction":1,"bidder":2,"price_eur":112098764423209890,"channel":"café 中文","dateTime":3}`; got != w {
		t.Fatalf("case 2: %s, want %s", got, w)
	}
	failures := 0
	for _, e := range want {
		if e.Tag == abi.TagError {
			failures++
		}
	}
	if failures != 14 {
		t.Fatalf("%d of %d cases fail, want 14: %+v", failures, len(want), want)
	}
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "jsonmap-"+lang)
			if !reflect.DeepEqual(in.desc, goMap.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goMap.desc)
			}
			got, err := in.run(ctx, "bid_eur", cases)
			if err != nil {
				t.Fatal(err)
			}
			for i := range max(len(got), len(want)) {
				if i >= len(got) || i >= len(want) || !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("case %d %q: got %s", i, jsonmapCases[min(i, len(jsonmapCases)-1)], jsonEntryAt(got, want, i))
				}
			}
			got, err = in.run(ctx, "bid_eur", bids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, wantBids) {
				i := firstDifference(got, wantBids)
				t.Errorf("bids: entry %d differs: got %s", i, jsonEntryAt(got, wantBids, i))
			}
		})
	}
	t.Run("encoding-json", func(t *testing.T) {
		got, err := instantiate(t, "jsonmap-std").run(ctx, "bid_eur", bids)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantBids) {
			i := firstDifference(got, wantBids)
			t.Errorf("bids: entry %d differs: got %s", i, jsonEntryAt(got, wantBids, i))
		}
	})
}

// jsonEntryAt describes entry i of got and want: its tag, value or error.
func jsonEntryAt(got, want []abi.Entry, i int) string {
	describe := func(es []abi.Entry) string {
		if i >= len(es) {
			return "none"
		}
		return fmt.Sprintf("tag %d value %q message %q", es[i].Tag, es[i].Value, es[i].Message)
	}
	return describe(got) + "\n want " + describe(want)
}
