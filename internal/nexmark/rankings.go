package nexmark

import (
	"cmp"
	"slices"
)

// Q9Row is an auction with its winning bid (query 9): the auction's
// members, then the bid's auction, bidder, price, dateTime and extra.
type Q9Row struct {
	ID                     int64
	ItemName, Description  string
	InitialBid, Reserve    int64
	DateTime, Expires      int64
	Seller, Category       int64
	Extra                  string
	Auction, Bidder, Price int64
	BidDateTime            int64
	BidExtra               string
}

// Q9 finds each auction's winning bid: of its bids between its dateTime and
// expires, both included, the highest, the earliest of equal prices (the
// first in events of equal times). Auctions without such a bid have none.
func Q9(events []Event) []Q9Row {
	out := q9(events)
	slices.SortFunc(out, func(x, y Q9Row) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Expires, y.Expires),
			cmp.Compare(x.Seller, y.Seller), cmp.Compare(x.Category, y.Category), cmp.Compare(x.BidDateTime, y.BidDateTime),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price), cmp.Compare(x.BidExtra, y.BidExtra))
	})
	return out
}

func q9(events []Event) []Q9Row {
	best := map[*Auction]*Bid{}
	auctions := map[int64][]*Auction{}
	for _, e := range events {
		if a := e.Auction; a != nil {
			auctions[a.ID] = append(auctions[a.ID], a)
		}
	}
	for _, b := range bids(events) {
		for _, a := range auctions[b.Auction] {
			if b.DateTime < a.DateTime || b.DateTime > a.Expires {
				continue
			}
			if w, ok := best[a]; !ok || b.Price > w.Price || b.Price == w.Price && b.DateTime < w.DateTime {
				best[a] = b
			}
		}
	}
	var out []Q9Row
	for a, b := range best {
		out = append(out, Q9Row{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires,
			a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra})
	}
	return out
}

// BidRow is a bid with every member (queries 18 and 19).
type BidRow struct {
	Auction, Bidder, Price int64
	Channel, URL           string
	DateTime               int64
	Extra                  string
}

func bidRow(b *Bid) BidRow {
	return BidRow{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra}
}

func compareBidRows(x, y BidRow) int {
	return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Bidder, y.Bidder),
		cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Price, y.Price),
		cmp.Compare(x.Channel, y.Channel), cmp.Compare(x.URL, y.URL), cmp.Compare(x.Extra, y.Extra))
}

// Q18 finds each bidder's last bid for each auction: of a bidder's bids for
// an auction, the one with the latest dateTime (the first in events of
// equal times).
func Q18(events []Event) []BidRow {
	out := q18(events)
	slices.SortFunc(out, compareBidRows)
	return out
}

func q18(events []Event) []BidRow {
	type pair struct{ bidder, auction int64 }
	last := map[pair]*Bid{}
	for _, b := range bids(events) {
		k := pair{b.Bidder, b.Auction}
		if l, ok := last[k]; !ok || b.DateTime > l.DateTime {
			last[k] = b
		}
	}
	var out []BidRow
	for _, b := range last {
		out = append(out, bidRow(b))
	}
	return out
}

// Q19Row is one of an auction's ten highest bids, with its rank from 1
// (query 19).
type Q19Row struct {
	BidRow
	RankNumber int64
}

// Q19TopN is how many bids of an auction query 19 ranks.
const Q19TopN = 10

// Q19 ranks each auction's bids by price, highest first, the earliest of
// equal prices first (the first in events of equal times), and keeps the
// first ten.
func Q19(events []Event) []Q19Row {
	out := q19(events)
	slices.SortFunc(out, func(x, y Q19Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.RankNumber, y.RankNumber), compareBidRows(x.BidRow, y.BidRow))
	})
	return out
}

func q19(events []Event) []Q19Row {
	byAuction := map[int64][]*Bid{}
	for _, b := range bids(events) {
		byAuction[b.Auction] = append(byAuction[b.Auction], b)
	}
	var out []Q19Row
	for _, bs := range byAuction {
		slices.SortStableFunc(bs, func(x, y *Bid) int {
			return cmp.Or(cmp.Compare(y.Price, x.Price), cmp.Compare(x.DateTime, y.DateTime))
		})
		for i, b := range bs[:min(len(bs), Q19TopN)] {
			out = append(out, Q19Row{bidRow(b), int64(i + 1)})
		}
	}
	return out
}

// Q20Row is a bid with its auction, of category 10 (query 20).
type Q20Row struct {
	Auction, Bidder, Price int64
	Channel, URL           string
	BidDateTime            int64
	BidExtra               string
	ItemName, Description  string
	InitialBid, Reserve    int64
	AuctionDateTime        int64
	Expires                int64
	Seller, Category       int64
	AuctionExtra           string
}

// Q20 joins every bid with its auction when the auction is in category 10
// (an unwindowed inner join: whatever their times).
func Q20(events []Event) []Q20Row {
	out := q20(events)
	slices.SortFunc(out, func(x, y Q20Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.BidDateTime, y.BidDateTime),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price), cmp.Compare(x.BidExtra, y.BidExtra),
			cmp.Compare(x.AuctionDateTime, y.AuctionDateTime), cmp.Compare(x.Seller, y.Seller))
	})
	return out
}

func q20(events []Event) []Q20Row {
	auctions := map[int64][]*Auction{}
	for _, e := range events {
		if a := e.Auction; a != nil && a.Category == 10 {
			auctions[a.ID] = append(auctions[a.ID], a)
		}
	}
	var out []Q20Row
	for _, b := range bids(events) {
		for _, a := range auctions[b.Auction] {
			out = append(out, Q20Row{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra,
				a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra})
		}
	}
	return out
}
