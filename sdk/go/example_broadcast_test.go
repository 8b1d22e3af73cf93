package udf_test

import (
	"fmt"

	udf "wasmstream.io/platform/sdk/go"
)

// limits maps a name to a limit, the same on every subtask.
var limits = udf.BroadcastMapState("example_limits")

func init() {
	udf.ProcessBroadcast("set_limits", func(ctx *udf.Context, recs []udf.Record) error {
		for _, r := range recs {
			name, limit, _ := cutByte(r.Value, '=')
			limits.Put(ctx, name, limit)
		}
		return nil
	})
	udf.Process("over_limit", func(ctx *udf.Context, key []byte, recs []udf.Record) error {
		limit, ok := limits.Get(ctx, key)
		for _, r := range recs {
			if ok && string(r.Value) > string(limit) {
				ctx.Emit(r)
			}
		}
		return nil
	})
	udf.Process("raise_limit", func(ctx *udf.Context, key []byte, recs []udf.Record) error {
		limits.Put(ctx, key, []byte("9"))
		return nil
	})
}

func cutByte(b []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

// A broadcast state set by a ProcessBroadcast function is read by the keyed
// Process function of every key; the keyed side cannot write it.
func ExampleProcessBroadcast() {
	h := udf.NewHarness("")
	if _, err := h.ProcessBroadcast("set_limits", udf.Record{Value: []byte("cpu=5")}, udf.Record{Value: []byte("disk=7")}); err != nil {
		panic(err)
	}
	out, err := h.Process("over_limit", []byte("cpu"), udf.Record{Value: []byte("4")}, udf.Record{Value: []byte("6")})
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("%s over its limit: %s\n", o.Record.Key, o.Record.Value)
	}
	out, err = h.Process("raise_limit", []byte("cpu"), udf.Record{Value: []byte("x")})
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0].Err)
	limit, _ := h.Broadcast("example_limits", []byte("cpu"))
	fmt.Printf("cpu's limit is still %s\n", limit)
	// Output:
	// cpu over its limit: 6
	// panic: udf: broadcast state "example_limits" is read-only in process and on_timer functions; only process_broadcast writes it
	// cpu's limit is still 5
}
