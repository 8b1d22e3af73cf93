// Command seqcheck is a UDF module for the platform's recovery tests: a keyed
// process function that keeps, per key, the last sequence number it saw in
// value state and emits every record with it, so that the output alone tells
// whether state and order survived failures. Its README says more; build it
// with make.
package main

import (
	"bytes"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// last is the key's last sequence number, in decimal.
var last = udf.ValueState("last")

func init() {
	udf.Process("track", track)
}

// track emits {"k":key,"s":seq,"p":previous} for each record
// {"k":key,"s":seq}, previous being the sequence number the key's state held
// before (0 for none), and keeps the record's as the key's last.
func track(ctx *udf.Context, key []byte, recs []udf.Record) error {
	var prev int64
	if v, ok := last.Get(ctx); ok {
		prev, _ = strconv.ParseInt(string(v), 10, 64)
	}
	var out []byte
	for _, r := range recs {
		seq := sequence(r.Value)
		out = append(out[:0], `{"k":`...)
		out = strconv.AppendQuote(out, string(key))
		out = append(out, `,"s":`...)
		out = strconv.AppendInt(out, seq, 10)
		out = append(out, `,"p":`...)
		out = strconv.AppendInt(out, prev, 10)
		out = append(out, '}')
		r.Value = bytes.Clone(out)
		ctx.Emit(r)
		prev = seq
	}
	last.Set(ctx, strconv.AppendInt(nil, prev, 10))
	return nil
}

// sequence reads the number after "s": in a record's JSON value; -1 when
// there is none.
func sequence(v []byte) int64 {
	i := bytes.Index(v, []byte(`"s":`))
	if i < 0 {
		return -1
	}
	var n int64
	found := false
	for _, c := range v[i+4:] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
		found = true
	}
	if !found {
		return -1
	}
	return n
}

func main() {}
