package udf_test

import (
	"fmt"
	"time"

	udf "wasmstream.io/platform/sdk/go"
)

// firstSeen remembers, per key, that the key was seen; entries expire an hour
// after they were written.
var firstSeen = udf.ValueState("example_first_seen", udf.TTL(time.Hour))

func init() {
	udf.Process("first_only", func(ctx *udf.Context, key []byte, recs []udf.Record) error {
		for _, r := range recs {
			if _, seen := firstSeen.Get(ctx); seen {
				continue
			}
			firstSeen.Set(ctx, []byte{1})
			ctx.Emit(r)
		}
		return nil
	})
}

// A process function keeps state per key; the Harness runs it natively, with
// state and TTL as the platform applies them.
func ExampleProcess() {
	h := udf.NewHarness("")
	show := func(out []udf.Output, err error) {
		if err != nil {
			panic(err)
		}
		for _, o := range out {
			fmt.Printf("%s %s at %d\n", o.Record.Key, o.Record.Value, o.Record.Timestamp)
		}
	}
	show(h.Process("first_only", []byte("alice"), udf.Record{Value: []byte("a1"), Timestamp: 1}, udf.Record{Value: []byte("a2"), Timestamp: 2}))
	show(h.Process("first_only", []byte("bob"), udf.Record{Value: []byte("b1"), Timestamp: 3}))
	show(h.Process("first_only", []byte("alice"), udf.Record{Value: []byte("a3"), Timestamp: 4}))
	if _, err := h.SetProcessingTime(time.Hour.Milliseconds()); err != nil {
		panic(err)
	}
	show(h.Process("first_only", []byte("alice"), udf.Record{Value: []byte("a4"), Timestamp: 5}))
	// Output:
	// alice a1 at 1
	// bob b1 at 3
	// alice a4 at 5
}
