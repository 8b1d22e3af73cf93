package udf_test

import (
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// windowFirings counts, per key and window, how often the window fired.
var windowFirings = udf.ValueState("example_window_firings")

func init() {
	udf.ProcessWindowWithState("example_firings", func(ctx *udf.Context, key []byte, w udf.Window, recs []udf.Record) error {
		n := 1
		if v, ok := windowFirings.Get(ctx); ok {
			prev, err := strconv.Atoi(string(v))
			if err != nil {
				return fmt.Errorf("firings state %q: %w", v, err)
			}
			n = prev + 1
		}
		windowFirings.Set(ctx, strconv.AppendInt(nil, int64(n), 10))
		ctx.EmitValue(fmt.Appendf(nil, "[%d,%d) firing %d: %d records", w.Start, w.End, n, len(recs)))
		return nil
	})
}

// A window process function with per-window state: a record late within the
// allowed lateness fires the window again, and its state says it is the
// second firing. The state goes when the platform drops the window.
func ExampleProcessWindowWithState() {
	h := udf.NewHarness("")
	key, w := []byte("alice"), udf.Window{Start: 0, End: 10}
	show(h.ProcessWindow("example_firings", key, w, rec("a", 1), rec("b", 7)))
	show(h.ProcessWindow("example_firings", key, w, rec("a", 1), rec("b", 7), rec("late", 3)))
	show(h.ProcessWindow("example_firings", key, udf.Window{Start: 10, End: 20}, rec("c", 12)))
	v, _ := h.WindowValue("example_window_firings", key, w)
	fmt.Printf("state of [0,10): %s\n", v)
	h.PurgeWindow(key, w)
	_, ok := h.WindowValue("example_window_firings", key, w)
	fmt.Println("state of [0,10) after the purge:", ok)
	// Output:
	// alice [0,10) firing 1: 2 records at 9
	// alice [0,10) firing 2: 3 records at 9
	// alice [10,20) firing 1: 1 records at 19
	// state of [0,10): 2
	// state of [0,10) after the purge: false
}
