// Command firings is a UDF module whose window process function keeps
// per-window state, as Flink's classic use of ProcessWindowFunction's
// windowState(): it counts how often each window of each key fired, so that
// a record late within the allowed lateness, which fires the window again,
// is reported as the window's second firing. Its README says more; build it
// with make.
package main

import (
	"encoding/binary"
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// fired is the number of times a window of a key has fired, 8 bytes
// little-endian.
var fired = udf.ValueState("fired")

func init() {
	udf.ProcessWindowWithState("count", count)
}

// count emits "<key> [<start>,<end>) firing <n>: <m> records" for the n-th
// firing of a window holding m records.
func count(ctx *udf.Context, key []byte, w udf.Window, recs []udf.Record) error {
	n := uint64(1)
	if v, ok := fired.Get(ctx); ok {
		if len(v) != 8 {
			return fmt.Errorf("state fired of key %q: %d bytes, want 8", key, len(v))
		}
		n = binary.LittleEndian.Uint64(v) + 1
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], n)
	fired.Set(ctx, buf[:])
	out := append(append([]byte{}, key...), " ["...)
	out = strconv.AppendInt(out, w.Start, 10)
	out = append(out, ',')
	out = strconv.AppendInt(out, w.End, 10)
	out = append(out, ") firing "...)
	out = strconv.AppendUint(out, n, 10)
	out = append(out, ": "...)
	out = strconv.AppendInt(out, int64(len(recs)), 10)
	ctx.EmitValue(append(out, " records"...))
	return nil
}

func main() {}
