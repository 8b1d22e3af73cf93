package main

import (
	"bytes"
	"encoding/binary"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// Queries 18 and 19 are updating results: each row they emit replaces the
// row of its key that came before (an upsert stream), the key being the
// bidder and auction for query 18, the auction and rank for query 19. A
// key's rows are emitted at most once per call, after its records.

// q18Last is the last bid of a bidder for an auction: its dateTime (8
// bytes), then its JSON.
var q18Last = udf.ValueState("q18_last")

// q18 keeps each bidder's last bid for each auction (the records of
// pair_key) and emits it when it changes: its members.
func q18(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	latest, has := int64(0), false
	if v, ok := q18Last.Get(ctx); ok && len(v) >= 8 {
		latest, has = int64(binary.LittleEndian.Uint64(v)), true
	}
	var last []byte
	for _, r := range recs {
		_, payload, err := untag(r.Value)
		if err != nil {
			return err
		}
		if err := readBidObject(payload, &bv); err != nil {
			return err
		}
		if t := bv.dateTime; !has || t > latest {
			latest, has, last = t, true, payload
		}
	}
	if last == nil {
		return nil
	}
	winBuf = binary.LittleEndian.AppendUint64(winBuf[:0], uint64(latest))
	winBuf = append(winBuf, last...)
	q18Last.Set(ctx, winBuf)
	ctx.EmitValue(winBuf[8:])
	return nil
}

// q19Top is an auction's ten highest bids, in rank order, each as an offer
// (price, dateTime, the bid's JSON) with the length of its JSON first.
var q19Top = udf.ValueState("q19_top")

// The top bids of the current key during a call: before and after its
// records.
var (
	topBefore, topAfter []offer
	topBuf              []byte
)

// q19 ranks each auction's bids (the records of bids) by price, highest
// first, the earliest of equal prices first, and emits the rows of the
// ranks that changed, each the bid's members and rank_number.
func q19(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	topBefore = topBefore[:0]
	if v, ok := q19Top.Get(ctx); ok {
		topBuf = append(topBuf[:0], v...)
		var err error
		if topBefore, err = readTop(topBefore, topBuf); err != nil {
			return err
		}
	}
	topAfter = append(topAfter[:0], topBefore...)
	for _, r := range recs {
		if err := readBidObject(r.Value, &bv); err != nil {
			return err
		}
		o := offer{bv.price, bv.dateTime, r.Value}
		at := len(topAfter)
		for i, b := range topAfter {
			if o.better(b, true) {
				at = i
				break
			}
		}
		if at >= q19TopN {
			continue
		}
		topAfter = append(topAfter, offer{})
		copy(topAfter[at+1:], topAfter[at:])
		topAfter[at] = o
		topAfter = topAfter[:min(len(topAfter), q19TopN)]
	}
	changed := false
	for i, o := range topAfter {
		if i < len(topBefore) && bytes.Equal(o.json, topBefore[i].json) {
			continue
		}
		changed = true
		row := append(number[:0], o.json[:len(o.json)-1]...)
		row = append(row, `,"rank_number":`...)
		row = strconv.AppendInt(row, int64(i+1), 10)
		number = append(row, '}')
		ctx.EmitValue(number)
	}
	if changed {
		winBuf = winBuf[:0]
		for _, o := range topAfter {
			winBuf = binary.LittleEndian.AppendUint32(winBuf, uint32(len(o.json)))
			winBuf = appendOffer(winBuf, o)
		}
		q19Top.Set(ctx, winBuf)
	}
	return nil
}

// q19TopN is how many bids of an auction query 19 ranks.
const q19TopN = 10

// readTop decodes q19Top's value into top.
func readTop(top []offer, v []byte) ([]offer, error) {
	for len(v) > 0 {
		if len(v) < 4 {
			return nil, errShortState
		}
		n := int(binary.LittleEndian.Uint32(v))
		if len(v) < 4+16+n {
			return nil, errShortState
		}
		o, err := readOffer(v[4 : 4+16+n])
		if err != nil {
			return nil, err
		}
		top = append(top, o)
		v = v[4+16+n:]
	}
	return top, nil
}
