package main

import (
	"encoding/binary"
	"errors"
	"strconv"

	udf "wasmstream.io/platform/sdk/go"
	"wasmstream.io/platform/sdk/go/json"
)

// Queries 15 and 16 count, per group (a day; a channel and a day), the
// bids, the distinct bidders and the distinct auctions, in all and per
// price rank. The split functions day_bids and channel_day_bids key the
// bids by group: {"k":GROUP,"g":{the group's columns},"minute":"HH:mm"
// (query 16 only),"bidder","auction","price"}; bid_stats counts them, and
// a timer at the day's last millisecond emits the group's row when the
// watermark has passed the day: the final row of the query's updating
// result.

// dayBids keys bids by day, for query 15.
func dayBids(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		scratch2 = appendDay(scratch2[:0], b.dateTime)
		out.Reset()
		out.BeginObject()
		out.Key("k")
		out.StringBytes(scratch2)
		out.Key("g")
		out.BeginObject()
		out.Key("day")
		out.StringBytes(scratch2)
		out.EndObject()
		endGroupBid(b)
		emitValue(r, emit)
		return nil
	})
}

// channelDayBids keys bids by channel and day, for query 16.
func channelDayBids(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		t := b.dateTime
		channel := text(b.channel, &scratch)
		scratch2 = appendDay(append(append(scratch2[:0], channel...), ' '), t)
		out.Reset()
		out.BeginObject()
		out.Key("k")
		out.StringBytes(scratch2)
		out.Key("g")
		out.BeginObject()
		out.Key("channel")
		out.Raw(b.channel)
		out.Key("day")
		out.StringBytes(scratch2[len(channel)+1:])
		out.EndObject()
		out.Key("minute")
		scratch2 = appendMinute(scratch2[:0], t)
		out.StringBytes(scratch2)
		endGroupBid(b)
		emitValue(r, emit)
		return nil
	})
}

func endGroupBid(b *bidView) {
	out.Key("bidder")
	out.Int(b.bidder)
	out.Key("auction")
	out.Int(b.auction)
	out.Key("price")
	out.Int(b.price)
	out.EndObject()
}

var (
	// statsRow is a group's counts (12 of 8 bytes: bids, bidders and
	// auctions, each in all and per rank), the length of its latest
	// minute (0 or 5) and the minute, then its columns' JSON object.
	statsRow = udf.ValueState("stats_row")
	// statsBidders and statsAuctions map the group's bidders and auctions
	// (their ids in decimal) to the set of ranks they bid at (bit r).
	statsBidders  = udf.MapState("stats_bidders")
	statsAuctions = udf.MapState("stats_auctions")
)

// groupBid reads the records of day_bids and channel_day_bids.
var groupBid = struct {
	keys   []string
	values []json.Value
}{[]string{"g", "minute", "bidder", "auction", "price"}, make([]json.Value, 5)}

// stats is a group's state during a call.
type stats struct {
	counts [12]int64 // bids[0..3], bidders[0..3], auctions[0..3]
	minute []byte
	group  []byte
	// sets caches the rank sets read from or written to the map states in
	// this call.
	sets [2]map[string]byte
}

var st = stats{sets: [2]map[string]byte{{}, {}}}

var errGroupBid = errors.New("not a record of day_bids or channel_day_bids")

// bidStats counts a group's bids.
func bidStats(ctx *udf.Context, _ []byte, recs []udf.Record) error {
	v, ok := statsRow.Get(ctx)
	if err := st.load(v, ok); err != nil {
		return err
	}
	clear(st.sets[0])
	clear(st.sets[1])
	for _, r := range recs {
		json.Lookup(r.Value, groupBid.keys, groupBid.values)
		g, m := groupBid.values[0], groupBid.values[1]
		bidder, ok1 := groupBid.values[2].Int()
		auction, ok2 := groupBid.values[3].Int()
		price, ok3 := groupBid.values[4].Int()
		if g.Kind != json.Object || !ok1 || !ok2 || !ok3 {
			return errGroupBid
		}
		if !ok {
			st.group, ok = append(st.group[:0], g.Raw...), true
			day := floorDiv(r.Timestamp, msPerDay) * msPerDay
			ctx.RegisterEventTimer(day + msPerDay - 1)
		}
		if m.Kind == json.String && string(m.Raw) > string(st.minute) {
			st.minute = append(st.minute[:0], m.Raw...)
		}
		rk := rank(price)
		st.counts[0]++
		st.counts[rk]++
		for i, id := range [...]int64{bidder, auction} {
			st.count(ctx, i, id, rk)
		}
	}
	statsRow.Set(ctx, st.appendRow(winBuf[:0]))
	return nil
}

// count adds a bid of rank rk by a bidder (set 0) or for an auction (set 1)
// to the distinct counts.
func (s *stats) count(ctx *udf.Context, set int, id int64, rk int) {
	state := [...]*udf.StateMap{statsBidders, statsAuctions}[set]
	number = strconv.AppendInt(number[:0], id, 10)
	ranks, cached := s.sets[set][string(number)]
	if !cached {
		if v, ok := state.Get(ctx, number); ok && len(v) == 1 {
			ranks, cached = v[0], true
		}
	}
	if !cached && ranks == 0 {
		s.counts[4*(set+1)]++ // a new bidder or auction
	}
	if ranks&(1<<rk) != 0 {
		s.sets[set][string(number)] = ranks
		return
	}
	ranks |= 1 << rk
	s.counts[4*(set+1)+rk]++
	s.sets[set][string(number)] = ranks
	state.Put(ctx, number, []byte{ranks})
}

// load reads the group's row, or starts an empty one.
func (s *stats) load(v []byte, ok bool) error {
	s.counts, s.minute, s.group = [12]int64{}, s.minute[:0], s.group[:0]
	if !ok {
		return nil
	}
	if len(v) < 12*8+1 || len(v) < 12*8+1+int(v[12*8]) {
		return errShortState
	}
	for i := range s.counts {
		s.counts[i] = int64(binary.LittleEndian.Uint64(v[8*i:]))
	}
	n := int(v[12*8])
	s.minute = append(s.minute, v[12*8+1:12*8+1+n]...)
	s.group = append(s.group, v[12*8+1+n:]...)
	return nil
}

func (s *stats) appendRow(dst []byte) []byte {
	for _, c := range s.counts {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(c))
	}
	dst = append(dst, byte(len(s.minute)))
	dst = append(dst, s.minute...)
	winBuf = append(dst, s.group...)
	return winBuf
}

// statsNames are the names of the counts in a row.
var statsNames = [12]string{"total_bids", "rank1_bids", "rank2_bids", "rank3_bids",
	"total_bidders", "rank1_bidders", "rank2_bidders", "rank3_bidders",
	"total_auctions", "rank1_auctions", "rank2_auctions", "rank3_auctions"}

// emitStats emits a group's row at the end of its day and forgets it: its
// columns, its latest minute (query 16) and its counts.
func emitStats(ctx *udf.Context, _ []byte, _ udf.Timer) error {
	v, ok := statsRow.Get(ctx)
	if !ok {
		return nil
	}
	if err := st.load(v, true); err != nil {
		return err
	}
	out.Reset()
	out.Buf = append(out.Buf, st.group[:len(st.group)-1]...)
	if len(st.minute) > 0 {
		out.Buf = append(out.Buf, `,"minute":`...)
		out.Buf = append(out.Buf, st.minute...)
	}
	for i, name := range statsNames {
		out.Buf = append(out.Buf, ',', '"')
		out.Buf = append(out.Buf, name...)
		out.Buf = append(out.Buf, '"', ':')
		out.Buf = strconv.AppendInt(out.Buf, st.counts[i], 10)
	}
	out.Buf = append(out.Buf, '}')
	ctx.EmitValue(out.Bytes())
	statsRow.Clear(ctx)
	statsBidders.Clear(ctx)
	statsAuctions.Clear(ctx)
	return nil
}
