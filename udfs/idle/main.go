// Command idle is a UDF module that reports keys gone quiet, with a
// processing-time timer per key (Flink's KeyedProcessFunction timeout
// example): a key that receives no record for a second of processing time
// is reported once with its last value. Build it with make.
package main

import (
	udf "wasmstream.io/platform/sdk/go"
)

// last is a key's last value; deadline the processing time its timer
// fires at.
var (
	last     = udf.ValueState("last")
	deadline = udf.ValueState("deadline")
)

// quiet is how long a key may go without a record, in milliseconds.
const quiet = 1000

func init() {
	udf.Process("watch", watch)
	udf.OnTimer("report", report)
}

// watch keeps the key's last value and moves its timer to a second after
// now.
func watch(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	if old, ok := deadline.Get(ctx); ok {
		ctx.DeleteProcessingTimer(decode(old))
	}
	due := ctx.ProcessingTime() + quiet
	last.Set(ctx, recs[len(recs)-1].Value)
	deadline.Set(ctx, encode(due))
	ctx.RegisterProcessingTimer(due)
	return nil
}

// report emits "idle <last value>" for the key and forgets it.
func report(ctx *udf.Context, _ []byte, _ udf.Timer) error {
	v, _ := last.Get(ctx)
	ctx.EmitValue(append([]byte("idle "), v...))
	last.Clear(ctx)
	deadline.Clear(ctx)
	return nil
}

func encode(ms int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(ms >> (8 * i))
	}
	return b
}

func decode(b []byte) int64 {
	var ms int64
	for i := 0; i < len(b) && i < 8; i++ {
		ms |= int64(b[i]) << (8 * i)
	}
	return ms
}

func main() {}
