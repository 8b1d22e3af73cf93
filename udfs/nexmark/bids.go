package main

import (
	"bytes"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

// The members of a bid, in bid's order.
const (
	bAuction = iota
	bBidder
	bPrice
	bChannel
	bURL
	bDateTime
	bExtra
)

var bid = newFields("bid", "auction#", "bidder#", "price#", "channel", "url", "dateTime#", "extra")

// out is the JSON of an output record; emit and the SDK copy it.
var out json.Writer

// scratch and scratch2 hold unescaped strings, number a formatted number.
var scratch, scratch2, number []byte

// bv is the bid being read.
var bv bidView

// eachBid calls f with the bid of a bid event, in bv, and ignores the other
// events.
func eachBid(r udf.Record, f func(b *bidView) error) error {
	ok, err := readBid(r.Value, &bv)
	if err != nil || !ok {
		return err
	}
	return f(&bv)
}

// bids emits the bid object of bid events, whose members it checks.
func bids(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		r.Value = b.obj
		emit(r)
		return nil
	})
}

// inner emits the object of the events of one type.
func inner(kind int) func(r udf.Record, emit func(udf.Record)) error {
	return func(r udf.Record, emit func(udf.Record)) error {
		obj, ok, err := member(r.Value, kind)
		if ok {
			r.Value = obj
			emit(r)
		}
		return err
	}
}

// emitValue emits what out holds as r's value.
func emitValue(r udf.Record, emit func(udf.Record)) {
	r.Value = out.Bytes()
	emit(r)
}

// beginBid starts out with a bid's auction, bidder and price (in cents,
// or as euros with three decimals when euros is set).
func beginBid(b *bidView, euros bool) {
	buf := append(head[:0], `{"auction":`...)
	buf = strconv.AppendInt(buf, b.auction, 10)
	buf = append(buf, `,"bidder":`...)
	buf = strconv.AppendInt(buf, b.bidder, 10)
	buf = append(buf, `,"price":`...)
	if euros {
		buf = appendDecimal3(buf, b.price*908)
	} else {
		buf = strconv.AppendInt(buf, b.price, 10)
	}
	head = buf
	out.Reset()
	out.Raw(head) // an object's first members: the writer adds a comma before the next
}

// head holds the first members of a bid's row.
var head []byte

// endBid ends out with a bid's dateTime and extra.
func endBid(b *bidView) {
	buf := append(out.Buf, `,"dateTime":`...)
	buf = strconv.AppendInt(buf, b.dateTime, 10)
	buf = append(buf, `,"extra":`...)
	buf = append(buf, b.extra...)
	out.Buf = append(buf, '}')
}

// q0 passes bids through: auction, bidder, price, dateTime, extra.
func q0(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		if b.channelAt > 0 {
			// The members kept, copied as they are written.
			out.Reset()
			out.Buf = append(append(out.Buf, b.obj[:b.channelAt]...), b.obj[b.dateTimeAt:]...)
		} else {
			beginBid(b, false)
			endBid(b)
		}
		emitValue(r, emit)
		return nil
	})
}

// q1 converts the price to euros, 0.908 * price with three decimals (a
// DECIMAL(23, 3)).
func q1(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		if b.channelAt > 0 {
			out.Reset()
			buf := append(out.Buf, b.obj[:b.priceAt]...)
			buf = appendDecimal3(buf, b.price*908)
			out.Buf = append(buf, b.obj[b.dateTimeAt:]...)
		} else {
			beginBid(b, true)
			endBid(b)
		}
		emitValue(r, emit)
		return nil
	})
}

// q2 selects the auction and price of bids for auctions whose id is a
// multiple of 123.
func q2(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		if b.auction%123 != 0 {
			return nil
		}
		buf := append(out.Buf[:0], `{"auction":`...)
		buf = strconv.AppendInt(buf, b.auction, 10)
		buf = append(buf, `,"price":`...)
		buf = strconv.AppendInt(buf, b.price, 10)
		out.Buf = append(buf, '}')
		emitValue(r, emit)
		return nil
	})
}

// q10 adds the partition a bid is logged to: its day (dt) and its hour and
// minute (hm), in UTC.
func q10(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		t := b.dateTime
		beginBid(b, false)
		out.Key("dateTime")
		out.Int(t)
		out.Key("extra")
		out.Raw(b.extra)
		out.Key("dt")
		scratch2 = appendDay(scratch2[:0], t)
		out.StringBytes(scratch2)
		out.Key("hm")
		scratch2 = appendMinute(scratch2[:0], t)
		out.StringBytes(scratch2)
		out.EndObject()
		emitValue(r, emit)
		return nil
	})
}

// q14 selects the bids of 1,000,000 to 50,000,000 cents in euros (both
// excluded), with the part of the day of their time and the number of c's
// in their extra.
func q14(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		euros := b.price * 908
		if euros <= 1_000_000_000 || euros >= 50_000_000_000 {
			return nil
		}
		t := b.dateTime
		kind := "otherTime"
		switch h := hourOf(t); {
		case h >= 8 && h <= 18:
			kind = "dayTime"
		case h <= 6 || h >= 20:
			kind = "nightTime"
		}
		extra := text(b.extra, &scratch)
		beginBid(b, true)
		out.Key("bidTimeType")
		out.String(kind)
		out.Key("dateTime")
		out.Int(t)
		out.Key("extra")
		out.Raw(b.extra)
		out.Key("c_counts")
		out.Int(int64(bytes.Count(extra, []byte{'c'})))
		out.EndObject()
		emitValue(r, emit)
		return nil
	})
}

// hotChannels are the ids query 21 gives the hot channels, by lower-case
// name.
var hotChannels = map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}

// q21 adds the channel's id: a hot channel's number, else the value of
// the URL's channel_id parameter; bids with neither are dropped.
func q21(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		scratch2 = asciiLower(scratch2[:0], text(b.channel, &scratch))
		id, hot := hotChannels[string(scratch2)]
		var fromURL []byte
		if !hot {
			var ok bool
			if fromURL, ok = channelID(text(b.url, &scratch)); !ok {
				return nil
			}
		}
		beginBid(b, false)
		out.Key("channel")
		out.Raw(b.channel)
		out.Key("channel_id")
		if hot {
			out.String(id)
		} else {
			out.StringBytes(fromURL)
		}
		out.EndObject()
		emitValue(r, emit)
		return nil
	})
}

// asciiLower appends s with its ASCII letters in lower case.
func asciiLower(dst, s []byte) []byte {
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// channelID is the value of the first channel_id parameter of url that
// starts it or follows an '&', up to the next '&'.
func channelID(url []byte) ([]byte, bool) {
	const param = "channel_id="
	i := 0
	if !bytes.HasPrefix(url, []byte(param)) {
		if i = bytes.Index(url, []byte("&"+param)); i < 0 {
			return nil, false
		}
		i++
	}
	v := url[i+len(param):]
	if end := bytes.IndexByte(v, '&'); end >= 0 {
		v = v[:end]
	}
	return v, true
}

// q22 adds the first three directories of the URL: its parts between
// slashes at indexes 3, 4 and 5, null where there is none.
func q22(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		url := text(b.url, &scratch)
		beginBid(b, false)
		out.Key("channel")
		out.Raw(b.channel)
		rest, part := url, 0
		for _, name := range [...]string{"dir1", "dir2", "dir3"} {
			for ; part < 3 && rest != nil; part++ {
				rest = after(rest, '/')
			}
			out.Key(name)
			if rest == nil {
				out.Null()
				continue
			}
			dir := rest
			if end := bytes.IndexByte(rest, '/'); end >= 0 {
				dir = rest[:end]
			}
			out.StringBytes(dir)
			rest = after(rest, '/')
		}
		out.EndObject()
		emitValue(r, emit)
		return nil
	})
}

// after is what follows the first c in s, nil when s has none.
func after(s []byte, c byte) []byte {
	i := bytes.IndexByte(s, c)
	if i < 0 {
		return nil
	}
	return s[i+1:]
}

// q13Bids emits the bids keyed for query 13's side input:
// {"k":auction mod 10000, "auction", "bidder", "price", "dateTime"}.
func q13Bids(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		out.Reset()
		out.BeginObject()
		out.Key("k")
		out.Int(b.auction % q13SideInput)
		out.Key("auction")
		out.Int(b.auction)
		out.Key("bidder")
		out.Int(b.bidder)
		out.Key("price")
		out.Int(b.price)
		out.Key("dateTime")
		out.Int(b.dateTime)
		out.EndObject()
		emitValue(r, emit)
		return nil
	})
}

// q13SideInput is the number of rows of query 13's side input.
const q13SideInput = 10_000

// pairKey emits a bid keyed by its bidder and auction, for query 18:
// {"k":"BIDDER AUCTION","b":bid}.
func pairKey(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		key := append(number[:0], '"')
		key = strconv.AppendInt(key, b.bidder, 10)
		key = append(key, ' ')
		key = strconv.AppendInt(key, b.auction, 10)
		number = append(key, '"')
		emitTagged(r, emit, number, 'b', b.obj)
		return nil
	})
}

// text is the contents of the JSON string raw (with its quotes): raw's own
// bytes without escapes, else unescaped into *buf, which keeps what it
// grew to. Only *buf is written: raw is a view of the input.
func text(raw []byte, buf *[]byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	*buf, _ = json.AppendUnescaped((*buf)[:0], raw[1:len(raw)-1])
	return *buf
}
