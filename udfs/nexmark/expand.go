package main

import (
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

// The members of auctionAll.
const (
	xID = iota
	xItemName
	xDescription
	xInitialBid
	xReserve
	xDateTime
	xExpires
	xSeller
	xCategory
	xExtra
)

// auctionSplit keys auctions and bids by auction, for queries 4, 9 and 20:
// {"k":id,"a":auction} and {"k":auction,"b":bid}.
func auctionSplit(r udf.Record, emit func(udf.Record)) error {
	if fastBid(r.Value, &bv) {
		number = strconv.AppendInt(number[:0], bv.auction, 10)
		emitTagged(r, emit, number, 'b', bv.obj)
		return nil
	}
	t, err := eventType(r.Value)
	if err != nil || t == kindPerson {
		return err
	}
	obj, _, err := member(r.Value, t)
	if err != nil {
		return err
	}
	if t == kindAuction {
		if err := auction.of(obj); err != nil {
			return err
		}
		emitTagged(r, emit, auction.raw(aID), 'a', obj)
		return nil
	}
	if err := readBidObject(obj, &bv); err != nil {
		return err
	}
	number = strconv.AppendInt(number[:0], bv.auction, 10)
	emitTagged(r, emit, number, 'b', bv.obj)
	return nil
}

var (
	// q20Auction is the auction's half of query 20's rows, or "-" for an
	// auction of another category than 10.
	q20Auction = udf.ValueState("q20_auction")
	// q20Bids are the bids that came before their auction.
	q20Bids = udf.ListState("q20_bids")
)

// q20Half is the auction's half of the current key's rows during a call.
var q20Half []byte

// q20 joins bids with their auction when it is in category 10, whichever
// comes first, and emits the bid's members with the auction's
// (auction, bidder, price, channel, url, bid_dateTime, bid_extra, itemName,
// description, initialBid, reserve, auction_dateTime, expires, seller,
// category, auction_extra).
func q20(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	half, known := q20Auction.Get(ctx)
	q20Half = append(q20Half[:0], half...)
	for _, r := range recs {
		tag, payload, err := untag(r.Value)
		if err != nil {
			return err
		}
		switch {
		case tag == 'a':
			if err := auctionAll.of(payload); err != nil {
				return err
			}
			q20Half, known = append(q20Half[:0], '-'), true
			if auctionAll.ints[xCategory] == 10 {
				q20Half = appendAuctionHalf(q20Half[:0])
			}
			q20Auction.Set(ctx, q20Half)
			for _, b := range q20Bids.Get(ctx) {
				if err := q20Emit(ctx, b); err != nil {
					return err
				}
			}
			q20Bids.Clear(ctx)
		case !known:
			q20Bids.Append(ctx, payload)
		default:
			if err := q20Emit(ctx, payload); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendAuctionHalf appends the members of auctionAll's auction as query
// 20 names them, and the row's closing brace.
func appendAuctionHalf(dst []byte) []byte {
	w := json.Writer{Buf: dst}
	for _, m := range [...]struct {
		name string
		i    int
	}{{"itemName", xItemName}, {"description", xDescription}, {"initialBid", xInitialBid}, {"reserve", xReserve},
		{"auction_dateTime", xDateTime}, {"expires", xExpires}, {"seller", xSeller}, {"category", xCategory},
		{"auction_extra", xExtra}} {
		w.Key(m.name)
		w.Raw(auctionAll.raw(m.i))
	}
	return append(w.Buf, '}')
}

// q20Emit emits a bid with the key's auction, unless the auction is of
// another category.
func q20Emit(ctx *udf.Context, b []byte) error {
	if q20Half[0] == '-' {
		return nil
	}
	if err := readBidObject(b, &bv); err != nil {
		return err
	}
	beginBid(&bv, false)
	buf := append(out.Buf, `,"channel":`...)
	buf = append(buf, bv.channel...)
	buf = append(buf, `,"url":`...)
	buf = append(buf, bv.url...)
	buf = append(buf, `,"bid_dateTime":`...)
	buf = strconv.AppendInt(buf, bv.dateTime, 10)
	buf = append(buf, `,"bid_extra":`...)
	buf = append(buf, bv.extra...)
	buf = append(buf, ',')
	out.Buf = append(buf, q20Half...)
	ctx.EmitValue(out.Bytes())
	return nil
}
