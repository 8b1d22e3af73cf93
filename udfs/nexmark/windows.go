package main

import (
	"encoding/binary"
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
)

// counted reads a built-in count's result.
var counted = newFields("count result", "key", "window_start#", "window_end#", "value#")

// count is a built-in count's result: the key (an auction id) and the
// count; q5Hot's window.
type count struct{ auction, n int64 }

var counts []count

// readCount reads a built-in aggregate's result, {"key":"K","window_start":S,
// "window_end":E,"value":N}, as the platform writes it or as any JSON.
func readCount(v []byte) (c count, start, end int64, err error) {
	p := 0
	ok := literal(v, 0, `{"key":"`)
	if ok {
		c.auction, p, ok = integer(v, len(`{"key":"`))
		ok = ok && literal(v, p, `","window_start":`)
	}
	if ok {
		start, p, ok = integer(v, p+len(`","window_start":`))
		ok = ok && literal(v, p, `,"window_end":`)
	}
	if ok {
		end, p, ok = integer(v, p+len(`,"window_end":`))
		ok = ok && literal(v, p, `,"value":`)
	}
	if ok {
		c.n, p, ok = integer(v, p+len(`,"value":`))
		if ok && p == len(v)-1 && v[p] == '}' {
			return c, start, end, nil
		}
	}
	if err := counted.of(v); err != nil {
		return c, 0, 0, err
	}
	scratch = counted.str(0, scratch)
	if c.auction, err = strconv.ParseInt(string(scratch), 10, 64); err != nil {
		return c, 0, 0, errors.New("count result whose key is not an auction id")
	}
	return count{c.auction, counted.ints[3]}, counted.ints[1], counted.ints[2], nil
}

// q5Hot gets the bid counts of every auction of one sliding window (the
// results of the built-in count, keyed by window_start) and emits the
// auctions with the most bids: {"auction","num","window_start","window_end"}.
func q5Hot(_ []byte, _ udf.Window, recs []udf.Record, emit func(udf.Record)) error {
	counts = counts[:0]
	most := int64(0)
	var start, end int64
	for _, r := range recs {
		c, s, e, err := readCount(r.Value)
		if err != nil {
			return err
		}
		counts = append(counts, c)
		most, start, end = max(most, c.n), s, e
	}
	for _, c := range counts {
		if c.n < most {
			continue
		}
		buf := append(out.Buf[:0], `{"auction":`...)
		buf = strconv.AppendInt(buf, c.auction, 10)
		buf = append(buf, `,"num":`...)
		buf = strconv.AppendInt(buf, most, 10)
		buf = append(buf, `,"window_start":`...)
		buf = strconv.AppendInt(buf, start, 10)
		buf = append(buf, `,"window_end":`...)
		buf = strconv.AppendInt(buf, end, 10)
		out.Buf = append(buf, '}')
		emit(udf.Record{Value: out.Buf})
	}
	return nil
}

// q17Acc is query 17's accumulator: the bids in all and per price rank,
// the least and greatest price, and their sum.
type q17Acc [7]int64

const (
	q17Total = 0 // q17Acc[1:4] are the ranks
	q17Min   = 4
	q17Max   = 5
	q17Sum   = 6
)

// q17Codec stores the seven counters in 56 bytes.
type q17Codec struct{}

func (q17Codec) Append(dst []byte, a *q17Acc) []byte {
	for _, v := range a {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

func (q17Codec) Decode(b []byte, a *q17Acc) error {
	if len(b) != 8*len(a) {
		return errors.New("q17: accumulator is not 56 bytes")
	}
	for i := range a {
		a[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

func q17Add(a *q17Acc, r udf.Record) error {
	if err := readBidObject(r.Value, &bv); err != nil {
		return err
	}
	p := bv.price
	if a[q17Total] == 0 || p < a[q17Min] {
		a[q17Min] = p
	}
	if a[q17Total] == 0 || p > a[q17Max] {
		a[q17Max] = p
	}
	a[q17Total]++
	a[rank(p)]++
	a[q17Sum] += p
	return nil
}

func q17Merge(a, o *q17Acc) error {
	if o[q17Total] == 0 {
		return nil
	}
	if a[q17Total] == 0 {
		*a = *o
		return nil
	}
	a[q17Min], a[q17Max] = min(a[q17Min], o[q17Min]), max(a[q17Max], o[q17Max])
	for _, i := range [...]int{q17Total, 1, 2, 3, q17Sum} {
		a[i] += o[i]
	}
	return nil
}

// q17Result is an auction's day: {"auction","day","total_bids",
// "rank1_bids","rank2_bids","rank3_bids","min_price","max_price",
// "avg_price","sum_price"}.
func q17Result(key []byte, w udf.Window, a *q17Acc) ([]byte, error) {
	out.Reset()
	out.BeginObject()
	out.Key("auction")
	out.Raw(key)
	out.Key("day")
	scratch2 = appendDay(scratch2[:0], w.Start)
	out.StringBytes(scratch2)
	for i, name := range [...]string{"total_bids", "rank1_bids", "rank2_bids", "rank3_bids", "min_price", "max_price"} {
		out.Key(name)
		out.Int(a[i])
	}
	out.Key("avg_price")
	out.Int(a[q17Sum] / a[q17Total])
	out.Key("sum_price")
	out.Int(a[q17Sum])
	out.EndObject()
	return out.Bytes(), nil
}

// rank is the price level of queries 15 to 17: 1 below 10,000 cents, 2
// below 1,000,000, 3 from there.
func rank(price int64) int {
	switch {
	case price < 10_000:
		return 1
	case price < 1_000_000:
		return 2
	}
	return 3
}
