// Command rules is a UDF module with the broadcast state pattern (Flink's
// KeyedBroadcastProcessFunction): a rule stream, broadcast to every
// subtask, sets a threshold per rule name, and an event stream keyed by
// user is matched against the rules as they are when each event arrives.
// Its README says more; build it with make.
package main

import (
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

// rules maps a rule name to its threshold, in decimal; hits counts a
// user's matches, in decimal.
var (
	rules = udf.BroadcastMapState("rules")
	hits  = udf.ValueState("hits")
)

func init() {
	udf.ProcessBroadcast("update", update)
	udf.Process("match", match)
	udf.Process("tamper", tamper)
	udf.ProcessBroadcast("peek", peek)
}

var (
	errNoRule   = errors.New(`no string field "rule"`)
	errNoAmount = errors.New(`no integer field "amount"`)
)

// update applies rule records in order: {"rule": name, "min": n} sets the
// rule's threshold, {"rule": name} without min deletes the rule.
func update(ctx *udf.Context, recs []udf.Record) error {
	var name []byte
	for _, r := range recs {
		var ok bool
		if name, ok = json.GetString(name[:0], r.Value, "rule"); !ok || len(name) == 0 {
			return errNoRule
		}
		if min, ok := json.GetInt(r.Value, "min"); ok {
			rules.Put(ctx, name, strconv.AppendInt(nil, min, 10))
		} else {
			rules.Remove(ctx, name)
		}
	}
	return nil
}

// match emits, for each event of a user and each rule (in name order) whose
// threshold its amount reaches, {"user", "rule", "amount", "hits"}, hits
// counting the user's matches so far.
func match(ctx *udf.Context, user []byte, events []udf.Record) error {
	n := int64(0)
	if v, ok := hits.Get(ctx); ok {
		n, _ = strconv.ParseInt(string(v), 10, 64)
	}
	var w json.Writer
	for _, e := range events {
		amount, ok := json.GetInt(e.Value, "amount")
		if !ok {
			return errNoAmount
		}
		for _, r := range rules.Entries(ctx) {
			min, _ := strconv.ParseInt(string(r.Value), 10, 64)
			if amount < min {
				continue
			}
			n++
			w.Reset()
			w.BeginObject()
			w.Key("user")
			w.StringBytes(user)
			w.Key("rule")
			w.StringBytes(r.Key)
			w.Key("amount")
			w.Int(amount)
			w.Key("hits")
			w.Int(n)
			w.EndObject()
			ctx.Emit(udf.Record{Key: user, Value: w.Bytes(), Timestamp: e.Timestamp})
		}
	}
	hits.Set(ctx, strconv.AppendInt(nil, n, 10))
	return nil
}

// tamper writes a broadcast state from the keyed side, which the platform
// refuses: it shows the error.
func tamper(ctx *udf.Context, user []byte, events []udf.Record) error {
	rules.Put(ctx, user, []byte("0"))
	return nil
}

// peek reads keyed state from the broadcast side, where there is no
// current key: it shows the error.
func peek(ctx *udf.Context, recs []udf.Record) error {
	hits.Get(ctx)
	return nil
}

func main() {}
