// Command newusers is a UDF module for Nexmark query 8, "new users who
// opened an auction in the same window": flat maps that split the Nexmark
// stream into persons and auctions (the events' inner objects, which are
// flat, so that key_by.field reads their ids), a window join function that reports a
// person who opened an auction in the window, and a coGroup function that
// counts each new person's auctions in the window, zero included (a left
// outer join). Its README says more; build it with make.
package main

import (
	"bytes"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.FlatMap("persons", func(r udf.Record, emit func(udf.Record)) error { return inner(r, "0", "person", emit) })
	udf.FlatMap("auctions", func(r udf.Record, emit func(udf.Record)) error { return inner(r, "1", "auction", emit) })
	udf.Join("new_user", newUser)
	udf.CoGroup("auction_counts", auctionCounts)
}

// out is the buffer results are built in; emit copies them.
var out []byte

// inner emits the object member of an event of the given event_type, as
// {"event_type":0,"person":{...},"auction":null,"bid":null,"dateTime":T}
// holds it; the object holds no braces within.
func inner(r udf.Record, eventType, member string, emit func(udf.Record)) error {
	if t, ok := field(r.Value, "event_type"); !ok || string(t) != eventType {
		return nil
	}
	var key [32]byte
	k := append(append(append(key[:0], '"'), member...), '"', ':', '{')
	i := bytes.Index(r.Value, k)
	if i < 0 {
		return nil
	}
	obj := r.Value[i+len(k)-1:]
	end := bytes.IndexByte(obj, '}')
	if end < 0 {
		return nil
	}
	r.Value = obj[:end+1]
	emit(r)
	return nil
}

// newUser emits {"id": person, "name": "...", "window_start": ms,
// "auction": id} for a person and an auction they opened in the window.
func newUser(_ []byte, w udf.Window, person, auction udf.Record, emit func(udf.Record)) error {
	id, _ := field(person.Value, "id")
	name, _ := field(person.Value, "name")
	a, _ := field(auction.Value, "id")
	out = append(out[:0], `{"id":`...)
	out = append(out, id...)
	out = append(out, `,"name":"`...)
	out = append(out, name...)
	out = append(out, `","window_start":`...)
	out = strconv.AppendInt(out, w.Start, 10)
	out = append(out, `,"auction":`...)
	out = append(out, a...)
	out = append(out, '}')
	emit(udf.Record{Value: out})
	return nil
}

// auctionCounts emits {"id": person, "auctions": n} for each person who
// joined in the window, with the number of auctions they opened in it,
// zero included. Auctions of people who joined earlier are left out.
func auctionCounts(_ []byte, _ udf.Window, persons, auctions []udf.Record, emit func(udf.Record)) error {
	for _, p := range persons {
		id, _ := field(p.Value, "id")
		out = append(out[:0], `{"id":`...)
		out = append(out, id...)
		out = append(out, `,"auctions":`...)
		out = strconv.AppendInt(out, int64(len(auctions)), 10)
		out = append(out, '}')
		emit(udf.Record{Value: out})
	}
	return nil
}

// field returns the raw value of the first field of that name in a JSON
// object: a string's contents (not unescaped) or the text of a number. The
// Nexmark records it reads name event_type first, their inner objects are
// flat, and their strings hold no quotes.
func field(v []byte, name string) ([]byte, bool) {
	var key [32]byte
	k := append(append(append(key[:0], '"'), name...), '"', ':')
	i := bytes.Index(v, k)
	if i < 0 {
		return nil, false
	}
	rest := v[i+len(k):]
	if len(rest) > 0 && rest[0] == '"' {
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		return rest[1 : 1+end], true
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], end > 0
}

func main() {}
