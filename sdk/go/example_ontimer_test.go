package udf_test

import (
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// pending counts a key's records until its timer fires.
var pending = udf.ValueState("example_pending")

func init() {
	udf.Process("count_per_second", func(ctx *udf.Context, key []byte, recs []udf.Record) error {
		n := 0
		if v, ok := pending.Get(ctx); ok {
			n, _ = strconv.Atoi(string(v))
		}
		pending.Set(ctx, strconv.AppendInt(nil, int64(n+len(recs)), 10))
		last := recs[len(recs)-1].Timestamp
		ctx.RegisterEventTimer(last - last%1000 + 999)
		return nil
	})
	udf.OnTimer("count_per_second_timer", func(ctx *udf.Context, key []byte, t udf.Timer) error {
		v, _ := pending.Get(ctx)
		ctx.EmitValue(append([]byte("count="), v...))
		pending.Clear(ctx)
		return nil
	})
}

// Timers fire through the OnTimer function when the watermark passes them;
// EmitValue emits with the timer's key and timestamp.
func ExampleOnTimer() {
	h := udf.NewHarness("count_per_second_timer")
	process := func(key string, ts int64) {
		if _, err := h.Process("count_per_second", []byte(key), udf.Record{Timestamp: ts}); err != nil {
			panic(err)
		}
	}
	advance := func(wm int64) {
		out, err := h.AdvanceWatermark(wm)
		if err != nil {
			panic(err)
		}
		for _, o := range out {
			fmt.Printf("%s %s at %d\n", o.Record.Key, o.Record.Value, o.Record.Timestamp)
		}
	}
	process("a", 100)
	process("a", 400)
	process("b", 900)
	advance(999)
	process("a", 1200)
	fmt.Println(len(h.Timers()), "timer left")
	advance(1999)
	// Output:
	// a count=2 at 999
	// b count=1 at 999
	// 1 timer left
	// a count=1 at 1999
}
