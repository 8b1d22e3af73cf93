// Command nexmark is a UDF module with the functions of the Nexmark
// queries (docs/NEXMARK.md): over the JSON events of the generator source
// (kind nexmark) or of `platform nexmark publish`, flat maps that select,
// project and compute (queries 0, 1, 2, 10, 14, 21, 22), split functions
// that key the events for the joins and aggregations, keyed process
// functions for the unwindowed joins, winning bids, running aggregates and
// rankings (queries 3, 4, 9, 15, 16, 18, 19, 20), and window, join and
// aggregate functions for the windowed ones (queries 5, 7, 8, 13, 17). The
// job specs in queries/ wire them up, with built-in operators where they
// apply. Its README says more; build it with make.
package main

import udf "wasmstream.io/platform/sdk/go"

func init() {
	// Events to their inner objects, and the stateless queries.
	udf.FlatMap("bids", bids)
	udf.FlatMap("persons", inner(kindPerson))
	udf.FlatMap("auctions", inner(kindAuction))
	udf.FlatMap("q0", q0)
	udf.FlatMap("q1", q1)
	udf.FlatMap("q2", q2)
	udf.FlatMap("q10", q10)
	udf.FlatMap("q14", q14)
	udf.FlatMap("q21", q21)
	udf.FlatMap("q22", q22)

	// Splits that key events for the stateful queries.
	udf.FlatMap("q3_split", q3Split)
	udf.FlatMap("auction_split", auctionSplit)
	udf.FlatMap("q13_bids", q13Bids)
	udf.FlatMap("day_bids", dayBids)
	udf.FlatMap("channel_day_bids", channelDayBids)
	udf.FlatMap("pair_key", pairKey)

	// Keyed process functions.
	udf.Process("q3", q3)
	udf.Process("winning", winning)
	udf.OnTimer("q4_close", q4Close)
	udf.OnTimer("q9_close", q9Close)
	udf.Process("q4_average", q4Average)
	udf.Process("bid_stats", bidStats)
	udf.OnTimer("emit_stats", emitStats)
	udf.Process("q18", q18)
	udf.Process("q19", q19)
	udf.Process("q20", q20)

	// Window, join and aggregate functions.
	udf.ProcessWindow("q5_hot", q5Hot)
	udf.Join("q7", q7)
	udf.CoGroup("q8", q8)
	udf.Join("q13", q13)
	udf.AggregateOf("q17", q17Codec{}, udf.TypedAggregate[q17Acc]{
		Create: func(a *q17Acc) { *a = q17Acc{} },
		Add:    q17Add,
		Merge:  q17Merge,
		Result: q17Result,
	})
}

// main never runs: the module is a reactor.
func main() {}
