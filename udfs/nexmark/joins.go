package main

import (
	"bytes"
	"fmt"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

var (
	person     = newFields("person", "id#", "name", "city", "state")
	auction    = newFields("auction", "id#", "seller#", "category#", "dateTime#", "expires#")
	auctionAll = newFields("auction", "id#", "itemName", "description", "initialBid#", "reserve#",
		"dateTime#", "expires#", "seller#", "category#", "extra")
)

// The members of auction.
const (
	aID = iota
	aSeller
	aCategory
	aDateTime
	aExpires
)

// tagged is the record a split function emits.
var tagged []byte

// emitTagged emits {"k":key,"<tag>":payload} with r's timestamp.
func emitTagged(r udf.Record, emit func(udf.Record), key []byte, tag byte, payload []byte) {
	tagged = appendTagged(tagged[:0], key, tag, payload)
	r.Value = tagged
	emit(r)
}

// q3Split keys query 3's two sides by person: the name, city and state of
// persons from Oregon, Idaho or California, and the id of auctions in
// category 10, keyed by their seller.
func q3Split(r udf.Record, emit func(udf.Record)) error {
	t, err := eventType(r.Value)
	if err != nil {
		return err
	}
	switch t {
	case kindPerson:
		obj, _, err := member(r.Value, kindPerson)
		if err != nil {
			return err
		}
		if err := person.of(obj); err != nil {
			return err
		}
		scratch = person.str(3, scratch)
		if s := string(scratch); s != "OR" && s != "ID" && s != "CA" {
			return nil
		}
		out.Reset()
		out.BeginObject()
		out.Key("name")
		out.Raw(person.raw(1))
		out.Key("city")
		out.Raw(person.raw(2))
		out.Key("state")
		out.Raw(person.raw(3))
		out.EndObject()
		emitTagged(r, emit, person.values[0].Raw, 'p', out.Bytes())
	case kindAuction:
		obj, _, err := member(r.Value, kindAuction)
		if err != nil {
			return err
		}
		if err := auction.of(obj); err != nil {
			return err
		}
		if auction.ints[aCategory] == 10 {
			emitTagged(r, emit, auction.raw(aSeller), 'a', auction.raw(aID))
		}
	}
	return nil
}

var (
	// q3Person is a seller's name, city and state, once they joined.
	q3Person = udf.ValueState("q3_person")
	// q3Auctions are the ids of a seller's auctions that came before them.
	q3Auctions = udf.ListState("q3_auctions")
)

// q3Seller holds the current key's person during a call.
var q3Seller []byte

// q3 joins sellers with their auctions, whichever comes first: it emits
// {"name","city","state","id"} for each pair.
func q3(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	p, known := q3Person.Get(ctx)
	q3Seller = append(q3Seller[:0], p...)
	for _, r := range recs {
		tag, payload, err := untag(r.Value)
		if err != nil {
			return err
		}
		switch {
		case tag == 'p':
			q3Seller, known = append(q3Seller[:0], payload...), true
			q3Person.Set(ctx, q3Seller)
			for _, id := range q3Auctions.Get(ctx) {
				q3Emit(ctx, id)
			}
			q3Auctions.Clear(ctx)
		case known:
			q3Emit(ctx, payload)
		default:
			q3Auctions.Append(ctx, payload)
		}
	}
	return nil
}

func q3Emit(ctx *udf.Context, id []byte) {
	row := append(tagged[:0], q3Seller[:len(q3Seller)-1]...)
	row = append(row, `,"id":`...)
	row = append(row, id...)
	tagged = append(row, '}')
	ctx.EmitValue(tagged)
}

// q8 emits {"id","name","starttime"} for each person who opened an auction
// in the window they joined in: a co_group of persons and auctions keyed
// by person.
func q8(_ []byte, w udf.Window, persons, auctions []udf.Record, emit func(udf.Record)) error {
	if len(auctions) == 0 {
		return nil
	}
	q8Seen = q8Seen[:0]
	for _, p := range persons {
		if err := person.of(p.Value); err != nil {
			return err
		}
		out.Reset()
		out.BeginObject()
		out.Key("id")
		out.Int(person.ints[0])
		out.Key("name")
		out.Raw(person.raw(1))
		out.Key("starttime")
		out.Int(w.Start)
		out.EndObject()
		if seen(out.Bytes()) {
			continue // the query's rows are distinct
		}
		emit(udf.Record{Value: out.Bytes()})
	}
	return nil
}

// q8Seen are the rows q8 emitted for a window.
var q8Seen [][]byte

func seen(row []byte) bool {
	for _, s := range q8Seen {
		if bytes.Equal(s, row) {
			return true
		}
	}
	q8Seen = append(q8Seen, bytes.Clone(row))
	return false
}

// windowEnd reads a built-in aggregate's window_end.
var windowEnd = newFields("result", "window_end#")

// q7 emits the bid that matched a window's highest price, with the
// window's end: {"auction","bidder","price","dateTime","extra","window_end"}.
// The interval join pairs the window's result (left) with the bids of its
// price (right) from the window's end minus its size to its end.
func q7(_ []byte, _ udf.Window, max, b udf.Record, emit func(udf.Record)) error {
	if err := windowEnd.of(max.Value); err != nil {
		return err
	}
	if err := readBidObject(b.Value, &bv); err != nil {
		return err
	}
	beginBid(&bv, false)
	endBid(&bv)
	out.Buf = append(out.Buf[:len(out.Buf)-1], `,"window_end":`...)
	out.Buf = append(strconv.AppendInt(out.Buf, windowEnd.ints[0], 10), '}')
	emit(udf.Record{Value: out.Bytes()})
	return nil
}

// q13 enriches a bid (left) with the side input's row (right, a sequence
// record {"seq":N,...}): {"auction","bidder","price","dateTime","value"},
// the value being N in decimal.
func q13(_ []byte, _ udf.Window, b, side udf.Record, emit func(udf.Record)) error {
	seq, kind, ok := json.Get(side.Value, "seq")
	if !ok || kind != json.Number {
		return fmt.Errorf("side input row without a number seq")
	}
	// b is {"k":K,"auction":...} from q13_bids: drop k, add value.
	comma := bytes.IndexByte(b.Value, ',')
	if comma < 0 || b.Value[len(b.Value)-1] != '}' {
		return errNotTagged
	}
	row := append(tagged[:0], '{')
	row = append(row, b.Value[comma+1:len(b.Value)-1]...)
	row = append(row, `,"value":"`...)
	row = append(row, seq...)
	tagged = append(row, '"', '}')
	emit(udf.Record{Value: tagged})
	return nil
}
