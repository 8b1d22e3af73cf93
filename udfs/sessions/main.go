// Command sessions is a UDF module for session windows over click records
// (flat JSON objects with "user", "page", "amount" and "ts"): a session
// summary (window_process), a dynamic session gap (session_gap) and a
// punctuated watermark (watermark). Its README says more; build it with
// make.
package main

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.ProcessWindow("summary", summary)
	udf.SessionGap("gap", gap)
	udf.Watermark("heartbeat", heartbeat)
}

// summary emits one record per session:
// {"key":"u1","window_start":S,"window_end":E,"events":N,"amount":A,"pages":["/a","/b"]}
// with the pages in the order they were visited and without repeats.
func summary(key []byte, w udf.Window, recs []udf.Record, emit func(udf.Record)) error {
	slices.SortStableFunc(recs, func(a, b udf.Record) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	var total float64
	var pages [][]byte
	for _, r := range recs {
		if a, ok := field(r.Value, "amount"); ok {
			v, err := strconv.ParseFloat(string(a), 64)
			if err != nil {
				return err
			}
			total += v
		}
		if p, ok := field(r.Value, "page"); ok && !slices.ContainsFunc(pages, func(q []byte) bool { return bytes.Equal(p, q) }) {
			pages = append(pages, p)
		}
	}
	b := append([]byte(`{"key":`), strconv.Quote(string(key))...)
	b = append(b, `,"window_start":`...)
	b = strconv.AppendInt(b, w.Start, 10)
	b = append(b, `,"window_end":`...)
	b = strconv.AppendInt(b, w.End, 10)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, int64(len(recs)), 10)
	b = append(b, `,"amount":`...)
	b = strconv.AppendFloat(b, total, 'f', -1, 64)
	b = append(b, `,"pages":[`...)
	for i, p := range pages {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, string(p))
	}
	emit(udf.Record{Value: append(b, "]}"...)})
	return nil
}

// gap is the session gap of a record: 30 s of inactivity end a session, or
// 5 minutes for a record on a checkout page (users think longer there).
func gap(r udf.Record) (int64, error) {
	if p, ok := field(r.Value, "page"); ok && bytes.HasPrefix(p, []byte("/checkout")) {
		return 5 * 60 * 1000, nil
	}
	return 30 * 1000, nil
}

// heartbeat emits a watermark at the timestamp of a record with
// "heartbeat":true: its producer promises nothing earlier follows.
func heartbeat(r udf.Record) (int64, bool, error) {
	v, ok := field(r.Value, "heartbeat")
	return r.Timestamp, ok && string(v) == "true", nil
}

func main() {}
