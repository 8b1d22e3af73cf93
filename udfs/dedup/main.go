// Command dedup is a UDF module with a keyed process function that drops
// duplicates: it emits a record only the first time its key is seen within
// an hour, keeping one value state with a TTL per key. Its README says more;
// build it with make.
package main

import (
	"time"

	udf "wasmstream.io/platform/sdk/go"
)

// seen marks a key as seen; the platform forgets the mark an hour after it
// was written (or as the job's state_ttl says).
var seen = udf.ValueState("seen", udf.TTL(time.Hour))

// mark is the value of seen: its presence is what matters.
var mark = []byte{1}

func init() {
	udf.Process("dedup", dedup)
}

// dedup passes on the first record of a key not seen within the TTL and
// drops the others.
func dedup(ctx *udf.Context, key []byte, recs []udf.Record) error {
	if _, ok := seen.Get(ctx); ok {
		return nil
	}
	seen.Set(ctx, mark)
	ctx.Emit(recs[0])
	return nil
}

func main() {}
