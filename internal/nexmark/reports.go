package nexmark

import (
	"cmp"
	"slices"
)

// Q12Row is how many bids a bidder made (query 12). The query counts them
// per tumbling window of processing time, which no reference can know:
// its rows add up per bidder to these.
type Q12Row struct{ Bidder, Count int64 }

// Q12 counts each bidder's bids.
func Q12(events []Event) []Q12Row {
	out := q12(events)
	slices.SortFunc(out, func(x, y Q12Row) int { return cmp.Compare(x.Bidder, y.Bidder) })
	return out
}

func q12(events []Event) []Q12Row {
	n := map[int64]int64{}
	for _, b := range bids(events) {
		n[b.Bidder]++
	}
	var out []Q12Row
	for bidder, c := range n {
		out = append(out, Q12Row{bidder, c})
	}
	return out
}

// PriceRank is the price level of queries 15 to 17: 1 below $100 (10,000
// cents), 2 below $10,000, 3 from $10,000.
func PriceRank(price int64) int {
	switch {
	case price < 10_000:
		return 1
	case price < 1_000_000:
		return 2
	}
	return 3
}

// BidStats are the counts of queries 15 and 16: bids, distinct bidders and
// distinct auctions, in all (index 0) and at each price rank (1 to 3).
type BidStats struct {
	Bids, Bidders, Auctions [4]int64
}

// statsOf counts a group's bids.
func statsOf(bs []*Bid) BidStats {
	var s BidStats
	var bidders, auctions [4]map[int64]bool
	for i := range bidders {
		bidders[i], auctions[i] = map[int64]bool{}, map[int64]bool{}
	}
	for _, b := range bs {
		for _, r := range [...]int{0, PriceRank(b.Price)} {
			s.Bids[r]++
			bidders[r][b.Bidder] = true
			auctions[r][b.Auction] = true
		}
	}
	for i := range bidders {
		s.Bidders[i], s.Auctions[i] = int64(len(bidders[i])), int64(len(auctions[i]))
	}
	return s
}

// Q15Row is a day's bidding statistics (query 15).
type Q15Row struct {
	Day string
	BidStats
}

// Q15 counts, per day, the bids, the distinct bidders and the distinct
// auctions bid for, in all and per price rank.
func Q15(events []Event) []Q15Row {
	out := q15(events)
	slices.SortFunc(out, func(x, y Q15Row) int { return cmp.Compare(x.Day, y.Day) })
	return out
}

func q15(events []Event) []Q15Row {
	byDay := map[string][]*Bid{}
	for _, b := range bids(events) {
		d := Day(b.DateTime)
		byDay[d] = append(byDay[d], b)
	}
	var out []Q15Row
	for d, bs := range byDay {
		out = append(out, Q15Row{d, statsOf(bs)})
	}
	return out
}

// Q16Row is a channel's bidding statistics of a day, with the latest
// minute of the day it had a bid in (query 16).
type Q16Row struct {
	Channel, Day, Minute string
	BidStats
}

// Q16 is Q15 per channel and day.
func Q16(events []Event) []Q16Row {
	out := q16(events)
	slices.SortFunc(out, func(x, y Q16Row) int {
		return cmp.Or(cmp.Compare(x.Channel, y.Channel), cmp.Compare(x.Day, y.Day))
	})
	return out
}

func q16(events []Event) []Q16Row {
	type group struct{ channel, day string }
	groups := map[group][]*Bid{}
	for _, b := range bids(events) {
		g := group{b.Channel, Day(b.DateTime)}
		groups[g] = append(groups[g], b)
	}
	var out []Q16Row
	for g, bs := range groups {
		minute := ""
		for _, b := range bs {
			minute = max(minute, Minute(b.DateTime))
		}
		out = append(out, Q16Row{g.channel, g.day, minute, statsOf(bs)})
	}
	return out
}

// Q17Row is an auction's bids of a day (query 17): their number, in all
// and per price rank, and the least, greatest, average (truncated, as
// SQL's AVG of a BIGINT) and total price.
type Q17Row struct {
	Auction                                    int64
	Day                                        string
	TotalBids, Rank1Bids, Rank2Bids, Rank3Bids int64
	MinPrice, MaxPrice, AvgPrice, SumPrice     int64
}

// Q17 sums up the bids of each auction and day.
func Q17(events []Event) []Q17Row {
	out := q17(events)
	slices.SortFunc(out, func(x, y Q17Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Day, y.Day))
	})
	return out
}

func q17(events []Event) []Q17Row {
	type group struct {
		auction int64
		day     string
	}
	rows := map[group]*Q17Row{}
	for _, b := range bids(events) {
		g := group{b.Auction, Day(b.DateTime)}
		r := rows[g]
		if r == nil {
			r = &Q17Row{Auction: g.auction, Day: g.day, MinPrice: b.Price, MaxPrice: b.Price}
			rows[g] = r
		}
		r.TotalBids++
		switch PriceRank(b.Price) {
		case 1:
			r.Rank1Bids++
		case 2:
			r.Rank2Bids++
		default:
			r.Rank3Bids++
		}
		r.MinPrice, r.MaxPrice = min(r.MinPrice, b.Price), max(r.MaxPrice, b.Price)
		r.SumPrice += b.Price
	}
	var out []Q17Row
	for _, r := range rows {
		r.AvgPrice = r.SumPrice / r.TotalBids
		out = append(out, *r)
	}
	return out
}
