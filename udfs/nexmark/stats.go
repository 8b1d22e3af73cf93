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
// bids by group: {"k":GROUP,"bidder","auction","price","minute":"HH:mm"
// (query 16 only),"g":{the group's columns}}; bid_stats counts them, and
// a timer at the day's last millisecond emits the group's row when the
// watermark has passed the day: the final row of the query's updating
// result.

// dayBids keys bids by day, for query 15.
func dayBids(r udf.Record, emit func(udf.Record)) error {
	return eachBid(r, func(b *bidView) error {
		scratch2 = appendDay(scratch2[:0], b.dateTime)
		buf := append(out.Buf[:0], `{"k":"`...)
		buf = append(buf, scratch2...)
		buf = groupBid(append(buf, '"'), b)
		buf = append(buf, `,"g":{"day":"`...)
		buf = append(buf, scratch2...)
		out.Buf = append(buf, `"}}`...)
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
		buf := groupBid(out.Buf, b)
		buf = append(buf, `,"minute":"`...)
		buf = append(appendMinute(buf, t), '"')
		buf = append(buf, `,"g":{"channel":`...)
		buf = append(buf, b.channel...)
		buf = append(buf, `,"day":"`...)
		buf = append(buf, scratch2[len(channel)+1:]...)
		out.Buf = append(buf, `"}}`...)
		emitValue(r, emit)
		return nil
	})
}

// groupBid appends the bid's members of a group's record.
func groupBid(dst []byte, b *bidView) []byte {
	dst = append(dst, `,"bidder":`...)
	dst = strconv.AppendInt(dst, b.bidder, 10)
	dst = append(dst, `,"auction":`...)
	dst = strconv.AppendInt(dst, b.auction, 10)
	dst = append(dst, `,"price":`...)
	return strconv.AppendInt(dst, b.price, 10)
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

// groupFields reads the records of day_bids and channel_day_bids in
// another layout than theirs.
var groupFields = struct {
	keys   []string
	values []json.Value
}{[]string{"g", "minute", "bidder", "auction", "price"}, make([]json.Value, 5)}

// groupRecord is a record of day_bids or channel_day_bids.
type groupRecord struct {
	bidder, auction, price int64
	minute, group          []byte
}

// readGroupRecord reads a record of day_bids or channel_day_bids: at once
// in the layout they write, else by json.Lookup.
func readGroupRecord(v []byte) (g groupRecord, err error) {
	if _, p, ok := plainString(v, len(`{"k":`)); ok && literal(v, 0, `{"k":`) && literal(v, p, `,"bidder":`) {
		if g.bidder, p, ok = integer(v, p+len(`,"bidder":`)); ok && literal(v, p, `,"auction":`) {
			if g.auction, p, ok = integer(v, p+len(`,"auction":`)); ok && literal(v, p, `,"price":`) {
				g.price, p, ok = integer(v, p+len(`,"price":`))
				if ok && literal(v, p, `,"minute":`) {
					g.minute, p, ok = plainString(v, p+len(`,"minute":`))
				}
				if ok && literal(v, p, `,"g":{`) && v[len(v)-2] == '}' && v[len(v)-1] == '}' {
					g.group = v[p+len(`,"g":`) : len(v)-1]
					return g, nil
				}
			}
		}
	}
	json.Lookup(v, groupFields.keys, groupFields.values)
	gv, m := groupFields.values[0], groupFields.values[1]
	var ok1, ok2, ok3 bool
	g.bidder, ok1 = groupFields.values[2].Int()
	g.auction, ok2 = groupFields.values[3].Int()
	g.price, ok3 = groupFields.values[4].Int()
	if gv.Kind != json.Object || !ok1 || !ok2 || !ok3 || m.Kind != json.Invalid && m.Kind != json.String {
		return g, errGroupBid
	}
	g.group, g.minute = gv.Raw, nil
	if m.Kind == json.String {
		g.minute = m.Raw
	}
	return g, nil
}

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
		g, err := readGroupRecord(r.Value)
		if err != nil {
			return err
		}
		if !ok {
			st.group, ok = append(st.group[:0], g.group...), true
			day := floorDiv(r.Timestamp, msPerDay) * msPerDay
			ctx.RegisterEventTimer(day + msPerDay - 1)
		}
		if string(g.minute) > string(st.minute) {
			st.minute = append(st.minute[:0], g.minute...)
		}
		rk := rank(g.price)
		st.counts[0]++
		st.counts[rk]++
		st.count(ctx, 0, g.bidder, rk)
		st.count(ctx, 1, g.auction, rk)
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
