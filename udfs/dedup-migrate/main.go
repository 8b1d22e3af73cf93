// Command dedup-migrate is the next version of udfs/dedup: it keeps a key's
// mark in a map state instead of a value state, and converts the marks of
// the running version when it takes over (an upgrade with migrate_state).
// Its README says more; build it with make.
package main

import (
	"bytes"
	"fmt"
	"time"

	udf "wasmstream.io/platform/sdk/go"
)

// seen is the value state of the version before: declared retired, it is
// restored only to be converted by migrate.
var seen = udf.ValueState("seen", udf.TTL(time.Hour), udf.Retired())

// marks holds a key's marks by what they mark; "first" says the key's first
// record has passed.
var marks = udf.MapState("marks", udf.TTL(time.Hour))

var (
	first = []byte("first")
	mark  = []byte{1}
)

func init() {
	udf.Process("dedup", dedup)
	udf.MigrateState("migrate", migrate)
}

// dedup passes on the first record of a key not seen within the TTL and
// drops the others.
func dedup(ctx *udf.Context, key []byte, recs []udf.Record) error {
	if _, ok := marks.Get(ctx, first); ok {
		return nil
	}
	marks.Put(ctx, first, mark)
	ctx.Emit(recs[0])
	return nil
}

// migrate moves a key's mark from seen into marks. A mark it does not know
// fails the upgrade rather than guess.
func migrate(ctx *udf.Context, key []byte) error {
	v, ok := seen.Get(ctx)
	if !ok {
		return nil
	}
	if !bytes.Equal(v, mark) {
		return fmt.Errorf("seen holds %x, not the mark %x", v, mark)
	}
	marks.Put(ctx, first, mark)
	return nil
}

func main() {}
