package nexmark

import (
	"cmp"
	"slices"
)

// The windowed queries' standard sizes, in milliseconds.
const (
	WindowSize = 10_000 // q5's sliding size, q7's and q8's tumbling size
	WindowHop  = 2_000  // q5's slide
	SessionGap = 10_000 // q11's session gap
)

// Q5Row is an auction with the most bids of a sliding window, and their
// number (query 5). The query's SQL outputs auction and num; the window is
// kept so that rows are unique.
type Q5Row struct {
	WindowStart, WindowEnd int64
	Auction, Num           int64
}

// Q5 is the hot items query with the standard windows: sliding windows of
// 10 s every 2 s.
func Q5(events []Event) []Q5Row { return Q5With(events, WindowSize, WindowHop) }

// Q5With counts the bids per auction in sliding windows of size ms every
// slide ms (windows start at multiples of slide; a bid at t is in those
// with start <= t < start+size) and returns, for each window, the auctions
// with the most bids in it, ties included.
func Q5With(events []Event, size, slide int64) []Q5Row {
	out := q5With(events, size, slide)
	slices.SortFunc(out, func(x, y Q5Row) int {
		return cmp.Or(cmp.Compare(x.WindowStart, y.WindowStart), cmp.Compare(x.Auction, y.Auction))
	})
	return out
}

func q5With(events []Event, size, slide int64) []Q5Row {
	type key struct{ start, auction int64 }
	counts := map[key]int64{}
	for _, b := range bids(events) {
		for s := floorDiv(b.DateTime, slide) * slide; s > b.DateTime-size; s -= slide {
			counts[key{s, b.Auction}]++
		}
	}
	most := map[int64]int64{}
	for k, n := range counts {
		most[k.start] = max(most[k.start], n)
	}
	var out []Q5Row
	for k, n := range counts {
		if n >= most[k.start] {
			out = append(out, Q5Row{k.start, k.start + size, k.auction, n})
		}
	}
	return out
}

// Q7Row is a bid with the highest price of a tumbling window (query 7).
// WindowEnd is the window's end (the query's B1.dateTime), kept so that
// rows are unique. The SQL of the reference lists price before bidder in
// its SELECT, so that its sink's columns swap them; the fields here are
// what their names say.
type Q7Row struct {
	WindowEnd                        int64
	Auction, Bidder, Price, DateTime int64
	Extra                            string
}

// Q7 is the highest bid query with the standard 10 s tumbling windows.
func Q7(events []Event) []Q7Row { return Q7With(events, WindowSize) }

// Q7With takes the highest price of each tumbling window of size ms, then
// joins it with every bid of that price whose dateTime is between the
// window's end minus size and its end, both included (as the query's
// BETWEEN: a bid at exactly the end, which belongs to the next window,
// matches too).
func Q7With(events []Event, size int64) []Q7Row {
	out := q7With(events, size)
	slices.SortFunc(out, func(x, y Q7Row) int {
		return cmp.Or(cmp.Compare(x.WindowEnd, y.WindowEnd), cmp.Compare(x.DateTime, y.DateTime),
			cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Bidder, y.Bidder),
			cmp.Compare(x.Price, y.Price), cmp.Compare(x.Extra, y.Extra))
	})
	return out
}

func q7With(events []Event, size int64) []Q7Row {
	maxPrice := map[int64]int64{} // by window end
	for _, b := range bids(events) {
		end := floorDiv(b.DateTime, size)*size + size
		if p, ok := maxPrice[end]; !ok || b.Price > p {
			maxPrice[end] = b.Price
		}
	}
	var out []Q7Row
	for _, b := range bids(events) {
		// The windows whose closed range [end-size, end] holds the bid:
		// its own, and the one before when it is at that one's end.
		start := floorDiv(b.DateTime, size) * size
		for _, end := range [...]int64{start, start + size} {
			if p, ok := maxPrice[end]; ok && p == b.Price && end-size <= b.DateTime && b.DateTime <= end {
				out = append(out, Q7Row{end, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
			}
		}
	}
	return out
}

// Q8Row is a person who opened an auction in the tumbling window they
// joined in, with the window's start (query 8).
type Q8Row struct {
	ID    int64
	Name  string
	Start int64
}

// Q8 is the new users query with the standard 10 s tumbling windows.
func Q8(events []Event) []Q8Row { return Q8With(events, WindowSize) }

// Q8With returns each distinct (person id, name, window) of persons who
// joined in a tumbling window of size ms in which an auction with them as
// the seller was opened.
func Q8With(events []Event, size int64) []Q8Row {
	out := q8With(events, size)
	slices.SortFunc(out, func(x, y Q8Row) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.ID, y.ID), cmp.Compare(x.Name, y.Name))
	})
	return out
}

func q8With(events []Event, size int64) []Q8Row {
	type sold struct{ seller, start int64 }
	sellers := map[sold]bool{}
	for _, e := range events {
		if a := e.Auction; a != nil {
			sellers[sold{a.Seller, floorDiv(a.DateTime, size) * size}] = true
		}
	}
	seen := map[Q8Row]bool{}
	var out []Q8Row
	for _, e := range events {
		if p := e.Person; p != nil {
			r := Q8Row{p.ID, p.Name, floorDiv(p.DateTime, size) * size}
			if sellers[sold{r.ID, r.Start}] && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// Q11Row is a bidder's session: its number of bids, its start (the first
// bid's dateTime) and its end (the last bid's plus the gap) (query 11).
type Q11Row struct {
	Bidder, Count, Start, End int64
}

// Q11 is the user sessions query with the standard 10 s gap.
func Q11(events []Event) []Q11Row { return Q11With(events, SessionGap) }

// Q11With groups each bidder's bids into session windows of gap ms: bids
// at most gap apart are in one session (windows that touch merge, as in
// Flink).
func Q11With(events []Event, gap int64) []Q11Row {
	out := q11With(events, gap)
	slices.SortFunc(out, func(x, y Q11Row) int {
		return cmp.Or(cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Start, y.Start))
	})
	return out
}

func q11With(events []Event, gap int64) []Q11Row {
	times := map[int64][]int64{}
	for _, b := range bids(events) {
		times[b.Bidder] = append(times[b.Bidder], b.DateTime)
	}
	var out []Q11Row
	for bidder, ts := range times {
		slices.Sort(ts)
		s := Q11Row{Bidder: bidder, Count: 1, Start: ts[0], End: ts[0] + gap}
		for _, t := range ts[1:] {
			if t > s.End {
				out = append(out, s)
				s = Q11Row{Bidder: bidder, Start: t}
			}
			s.Count++
			s.End = t + gap
		}
		out = append(out, s)
	}
	return out
}
