package nexmark

import (
	"cmp"
	"slices"
)

// The reference queries follow the SQL of nexmark/nexmark's queries over a
// finite list of events in event time: every event counts (none is late),
// and a query whose SQL result is an updating table returns its final
// contents. Each returns its rows sorted by all their fields, so that two
// results compare with slices.Equal.

// Q0Row is a bid passed through (query 0).
type Q0Row struct {
	Auction, Bidder, Price, DateTime int64
	Extra                            string
}

// Q0 passes every bid through: auction, bidder, price, dateTime, extra.
func Q0(events []Event) []Q0Row {
	out := q0(events)
	slices.SortFunc(out, func(x, y Q0Row) int {
		return cmp.Or(cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Auction, y.Auction),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price), cmp.Compare(x.Extra, y.Extra))
	})
	return out
}

func q0(events []Event) []Q0Row {
	var out []Q0Row
	for _, b := range bids(events) {
		out = append(out, Q0Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return out
}

// Q1Row is a bid with its price converted to euros (query 1). Price is in
// thousandths of a cent: 0.908 * price, as the query's DECIMAL(23, 3),
// exactly price * 908.
type Q1Row struct {
	Auction, Bidder, Price, DateTime int64
	Extra                            string
}

// Q1 converts each bid's price from dollars to euros.
func Q1(events []Event) []Q1Row {
	return q1From(Q0(events)) // in Q0's order, which Price*908 keeps
}

func q1(events []Event) []Q1Row { return q1From(q0(events)) }

func q1From(bids []Q0Row) []Q1Row {
	var out []Q1Row
	for _, r := range bids {
		out = append(out, Q1Row{r.Auction, r.Bidder, r.Price * 908, r.DateTime, r.Extra})
	}
	return out
}

// Q2Row is a bid's auction and price (query 2).
type Q2Row struct{ Auction, Price int64 }

// Q2 selects the bids for auctions whose id is a multiple of 123.
func Q2(events []Event) []Q2Row {
	out := q2(events)
	slices.SortFunc(out, func(x, y Q2Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Price, y.Price))
	})
	return out
}

func q2(events []Event) []Q2Row {
	var out []Q2Row
	for _, b := range bids(events) {
		if b.Auction%123 == 0 {
			out = append(out, Q2Row{b.Auction, b.Price})
		}
	}
	return out
}

// Q3Row is a seller in Oregon, Idaho or California with an auction in
// category 10 (query 3).
type Q3Row struct {
	Name, City, State string
	ID                int64 // the auction's
}

// Q3 joins the auctions of category 10 with their sellers from OR, ID or CA
// (an unwindowed inner join: a person and an auction match whatever their
// times).
func Q3(events []Event) []Q3Row {
	out := q3(events)
	slices.SortFunc(out, func(x, y Q3Row) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.Name, y.Name),
			cmp.Compare(x.City, y.City), cmp.Compare(x.State, y.State))
	})
	return out
}

func q3(events []Event) []Q3Row {
	people := map[int64][]*Person{}
	for _, e := range events {
		if p := e.Person; p != nil && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
			people[p.ID] = append(people[p.ID], p)
		}
	}
	var out []Q3Row
	for _, e := range events {
		if a := e.Auction; a != nil && a.Category == 10 {
			for _, p := range people[a.Seller] {
				out = append(out, Q3Row{p.Name, p.City, p.State, a.ID})
			}
		}
	}
	return out
}

// Q4Row is a category's average winning price (query 4).
type Q4Row struct{ Category, Final int64 }

// Q4 is, by category, the average over its auctions with a bid of their
// highest bid between the auction's dateTime and expires, both included.
// The average is the SQL AVG of a BIGINT: the sum divided by the count,
// truncated.
func Q4(events []Event) []Q4Row {
	out := q4(events)
	slices.SortFunc(out, func(x, y Q4Row) int { return cmp.Compare(x.Category, y.Category) })
	return out
}

func q4(events []Event) []Q4Row {
	type auction struct{ id, category int64 }
	auctions := map[int64][]*Auction{}
	for _, e := range events {
		if a := e.Auction; a != nil {
			auctions[a.ID] = append(auctions[a.ID], a)
		}
	}
	final := map[auction]int64{}
	for _, b := range bids(events) {
		for _, a := range auctions[b.Auction] {
			if b.DateTime < a.DateTime || b.DateTime > a.Expires {
				continue
			}
			k := auction{a.ID, a.Category}
			if f, ok := final[k]; !ok || b.Price > f {
				final[k] = b.Price
			}
		}
	}
	sum, n := map[int64]int64{}, map[int64]int64{}
	for k, f := range final {
		sum[k.category] += f
		n[k.category]++
	}
	var out []Q4Row
	for c, s := range sum {
		out = append(out, Q4Row{c, s / n[c]})
	}
	return out
}

// bids returns the bids of events, in their order.
func bids(events []Event) []*Bid {
	var out []*Bid
	for _, e := range events {
		if e.Bid != nil {
			out = append(out, e.Bid)
		}
	}
	return out
}

// floorDiv is a/b rounded down; b is positive.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
