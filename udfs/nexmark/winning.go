package main

import (
	"encoding/binary"
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// The winning bid of an auction (queries 4 and 9) is its highest bid
// between its dateTime and expires, both included, the earliest of equal
// prices. winning keeps, per auction, the auction and its best bid so far,
// and a timer at expires closes it: when the watermark reaches expires no
// bid for the auction that is not late can be missing. Bids that come
// before their auction (they name an auction created a little later) wait
// in a list until it comes, or until the watermark passes their time, after
// which no auction that could take them can come.

var (
	// winAuction is the auction: its dateTime and expires (8 bytes each),
	// then its JSON.
	winAuction = udf.ValueState("win_auction")
	// winBest is the best bid so far: its price and dateTime, then its
	// JSON.
	winBest = udf.ValueState("win_best")
	// winEarly are the bids that came before the auction, each as winBest.
	winEarly = udf.ListState("win_early")
)

// offer is a bid as winning compares them.
type offer struct {
	price, at int64
	json      []byte
}

// better reports whether o beats the best bid b.
func (o offer) better(b offer, has bool) bool {
	return !has || o.price > b.price || o.price == b.price && o.at < b.at
}

func appendOffer(dst []byte, o offer) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(o.price))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(o.at))
	return append(dst, o.json...)
}

var errShortState = errors.New("state value shorter than its 16-byte header")

func readOffer(v []byte) (offer, error) {
	if len(v) < 16 {
		return offer{}, errShortState
	}
	return offer{int64(binary.LittleEndian.Uint64(v)), int64(binary.LittleEndian.Uint64(v[8:])), v[16:]}, nil
}

// winBuf and bestBuf hold the current key's auction header and best bid
// during a call.
var winBuf, bestBuf, early []byte

// winning follows the bids of each auction (records of auction_split).
func winning(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	a, hasAuction := winAuction.Get(ctx)
	var opens, closes int64
	if hasAuction {
		if len(a) < 16 {
			return errShortState
		}
		opens, closes = int64(binary.LittleEndian.Uint64(a)), int64(binary.LittleEndian.Uint64(a[8:]))
	}
	v, hasBest := winBest.Get(ctx)
	best, err := offer{}, error(nil)
	if hasBest {
		bestBuf = append(bestBuf[:0], v...)
		if best, err = readOffer(bestBuf); err != nil {
			return err
		}
	}
	changed := false
	consider := func(o offer) {
		if opens <= o.at && o.at <= closes && o.better(best, hasBest) {
			bestBuf = appendOffer(bestBuf[:0], o)
			best, _ = readOffer(bestBuf)
			hasBest, changed = true, true
		}
	}
	for _, r := range recs {
		tag, payload, err := untag(r.Value)
		if err != nil {
			return err
		}
		if tag == 'a' {
			if err := auction.of(payload); err != nil {
				return err
			}
			opens, closes, hasAuction = auction.ints[aDateTime], auction.ints[aExpires], true
			winBuf = binary.LittleEndian.AppendUint64(winBuf[:0], uint64(opens))
			winBuf = binary.LittleEndian.AppendUint64(winBuf, uint64(closes))
			winBuf = append(winBuf, payload...)
			winAuction.Set(ctx, winBuf)
			ctx.RegisterEventTimer(closes)
			for _, e := range winEarly.Get(ctx) {
				o, err := readOffer(e)
				if err != nil {
					return err
				}
				consider(o)
			}
			winEarly.Clear(ctx)
			continue
		}
		if err := readBidObject(payload, &bv); err != nil {
			return err
		}
		o := offer{bv.price, bv.dateTime, payload}
		if !hasAuction {
			early = appendOffer(early[:0], o)
			winEarly.Append(ctx, early)
			ctx.RegisterEventTimer(o.at)
			continue
		}
		consider(o)
	}
	if changed {
		winBest.Set(ctx, bestBuf)
	}
	return nil
}

// closeAuction handles a timer of winning: at the auction's expires it
// calls emit with the auction's JSON and its winning bid, if it has one,
// and forgets the auction; before, it drops the early bids the watermark
// has passed.
func closeAuction(ctx *udf.Context, t udf.Timer, emit func(ctx *udf.Context, auction []byte, best offer) error) error {
	a, ok := winAuction.Get(ctx)
	if ok && len(a) >= 16 && t.Timestamp >= int64(binary.LittleEndian.Uint64(a[8:])) {
		winBuf = append(winBuf[:0], a[16:]...)
		if v, ok := winBest.Get(ctx); ok {
			best, err := readOffer(v)
			if err != nil {
				return err
			}
			if err := emit(ctx, winBuf, best); err != nil {
				return err
			}
		}
		winAuction.Clear(ctx)
		winBest.Clear(ctx)
		winEarly.Clear(ctx)
		return nil
	}
	kept := 0
	list := winEarly.Get(ctx)
	for _, e := range list {
		if o, err := readOffer(e); err == nil && o.at > t.Timestamp {
			kept++
		}
	}
	if kept == len(list) {
		return nil
	}
	var keep [][]byte
	for _, e := range list {
		if o, _ := readOffer(e); o.at > t.Timestamp {
			keep = append(keep, append([]byte(nil), e...))
		}
	}
	winEarly.Clear(ctx)
	for _, e := range keep {
		winEarly.Append(ctx, e)
	}
	return nil
}

// q9Close emits an auction with its winning bid: the auction's members,
// then auction, bidder, price, bid_dateTime and bid_extra.
func q9Close(ctx *udf.Context, _ []byte, t udf.Timer) error {
	return closeAuction(ctx, t, func(ctx *udf.Context, a []byte, best offer) error {
		if err := readBidObject(best.json, &bv); err != nil {
			return err
		}
		out.Reset()
		out.Buf = append(out.Buf, a[:len(a)-1]...)
		out.Buf = append(out.Buf, `,"auction":`...)
		out.Buf = strconv.AppendInt(out.Buf, bv.auction, 10)
		out.Buf = append(out.Buf, `,"bidder":`...)
		out.Buf = strconv.AppendInt(out.Buf, bv.bidder, 10)
		out.Buf = append(out.Buf, `,"price":`...)
		out.Buf = strconv.AppendInt(out.Buf, best.price, 10)
		out.Buf = append(out.Buf, `,"bid_dateTime":`...)
		out.Buf = strconv.AppendInt(out.Buf, best.at, 10)
		out.Buf = append(out.Buf, `,"bid_extra":`...)
		out.Buf = append(out.Buf, bv.extra...)
		out.Buf = append(out.Buf, '}')
		ctx.EmitValue(out.Bytes())
		return nil
	})
}

// q4Close emits an auction's category and winning price:
// {"category","final"}.
func q4Close(ctx *udf.Context, _ []byte, t udf.Timer) error {
	return closeAuction(ctx, t, func(ctx *udf.Context, a []byte, best offer) error {
		if err := auction.of(a); err != nil {
			return err
		}
		out.Reset()
		out.BeginObject()
		out.Key("category")
		out.Int(auction.ints[aCategory])
		out.Key("final")
		out.Int(best.price)
		out.EndObject()
		ctx.EmitValue(out.Bytes())
		return nil
	})
}

// q4Sum is a category's sum of winning prices and their number.
var q4Sum = udf.ValueState("q4_sum")

var final = newFields("winning price", "final#")

// q4Average keeps each category's average winning price and emits it,
// {"category","final"}, after each call that changed it: an upsert of the
// category's row.
func q4Average(ctx *udf.Context, key []byte, recs []udf.Record) error {
	var sum, n int64
	if v, ok := q4Sum.Get(ctx); ok && len(v) == 16 {
		sum, n = int64(binary.LittleEndian.Uint64(v)), int64(binary.LittleEndian.Uint64(v[8:]))
	}
	for _, r := range recs {
		if err := final.of(r.Value); err != nil {
			return err
		}
		sum += final.ints[0]
		n++
	}
	winBuf = binary.LittleEndian.AppendUint64(winBuf[:0], uint64(sum))
	winBuf = binary.LittleEndian.AppendUint64(winBuf, uint64(n))
	q4Sum.Set(ctx, winBuf)
	out.Reset()
	out.BeginObject()
	out.Key("category")
	out.Raw(key)
	out.Key("final")
	out.Int(sum / n)
	out.EndObject()
	ctx.EmitValue(out.Bytes())
	return nil
}
