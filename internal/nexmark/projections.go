package nexmark

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Day and Minute format an event time, in UTC, as the queries'
// DATE_FORMAT(dateTime, 'yyyy-MM-dd') and DATE_FORMAT(dateTime, 'HH:mm').
func Day(ms int64) string    { return time.UnixMilli(ms).UTC().Format("2006-01-02") }
func Minute(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04") }

// Q10Row is a bid with the day and the minute of its time, the partition
// of the file it is logged to (query 10).
type Q10Row struct {
	Auction, Bidder, Price, DateTime int64
	Extra, Dt, Hm                    string
}

// Q10 logs every bid with the partition it goes to: its day and its
// hour and minute.
func Q10(events []Event) []Q10Row {
	out := q10(events)
	slices.SortFunc(out, func(x, y Q10Row) int {
		return cmp.Or(cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Auction, y.Auction),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price), cmp.Compare(x.Extra, y.Extra))
	})
	return out
}

func q10(events []Event) []Q10Row {
	var out []Q10Row
	for _, b := range bids(events) {
		out = append(out, Q10Row{b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra, Day(b.DateTime), Minute(b.DateTime)})
	}
	return out
}

// Q13SideInput is the number of rows of query 13's side input: row k has
// the key k and the value k in decimal, as nexmark/nexmark's side input
// file.
const Q13SideInput = 10_000

// Q13Row is a bid enriched with the side input's value for its auction
// (query 13).
type Q13Row struct {
	Auction, Bidder, Price, DateTime int64
	Value                            string
}

// Q13 joins every bid with the side input's row of key auction modulo
// 10000.
func Q13(events []Event) []Q13Row {
	out := q13(events)
	slices.SortFunc(out, func(x, y Q13Row) int {
		return cmp.Or(cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Auction, y.Auction),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price))
	})
	return out
}

func q13(events []Event) []Q13Row {
	side := map[int64]string{}
	for k := range int64(Q13SideInput) {
		side[k] = strconv.FormatInt(k, 10)
	}
	var out []Q13Row
	for _, b := range bids(events) {
		if v, ok := side[b.Auction%Q13SideInput]; ok {
			out = append(out, Q13Row{b.Auction, b.Bidder, b.Price, b.DateTime, v})
		}
	}
	return out
}

// Q14Row is a bid with a price in a range, in euros, and two computed
// columns (query 14). Price is in thousandths of a cent, as in Q1Row.
type Q14Row struct {
	Auction, Bidder, Price int64
	BidTimeType            string
	DateTime               int64
	Extra                  string
	CCounts                int64
}

// Q14 selects the bids whose price in euros (0.908 * price) is above
// 1,000,000 and below 50,000,000 cents, with the part of the day of their
// time (UTC hours 8 to 18 "dayTime", up to 6 and from 20 "nightTime",
// others "otherTime") and the number of c's in their extra.
func Q14(events []Event) []Q14Row {
	out := q14(events)
	slices.SortFunc(out, func(x, y Q14Row) int {
		return cmp.Or(cmp.Compare(x.DateTime, y.DateTime), cmp.Compare(x.Auction, y.Auction),
			cmp.Compare(x.Bidder, y.Bidder), cmp.Compare(x.Price, y.Price), cmp.Compare(x.Extra, y.Extra))
	})
	return out
}

func q14(events []Event) []Q14Row {
	var out []Q14Row
	for _, b := range bids(events) {
		euros := b.Price * 908
		if euros <= 1_000_000_000 || euros >= 50_000_000_000 {
			continue
		}
		kind := "otherTime"
		switch h := time.UnixMilli(b.DateTime).UTC().Hour(); {
		case h >= 8 && h <= 18:
			kind = "dayTime"
		case h <= 6 || h >= 20:
			kind = "nightTime"
		}
		out = append(out, Q14Row{b.Auction, b.Bidder, euros, kind, b.DateTime, b.Extra, int64(strings.Count(b.Extra, "c"))})
	}
	return out
}

// Q21Row is a bid with the id of its channel (query 21).
type Q21Row struct {
	Auction, Bidder, Price int64
	Channel, ChannelID     string
}

// q21ChannelID is the reference's pattern of a channel id in a URL.
var q21ChannelID = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

// q21Channels are the ids of the hot channels, by lower-case name.
var q21Channels = map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}

// Q21 adds the channel id to the bids from a hot channel (its number) or
// with a channel_id parameter in their URL (its value), and drops the
// others.
func Q21(events []Event) []Q21Row {
	out := q21(events)
	slices.SortFunc(out, func(x, y Q21Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Bidder, y.Bidder),
			cmp.Compare(x.Price, y.Price), cmp.Compare(x.Channel, y.Channel), cmp.Compare(x.ChannelID, y.ChannelID))
	})
	return out
}

func q21(events []Event) []Q21Row {
	var out []Q21Row
	for _, b := range bids(events) {
		id, hot := q21Channels[strings.ToLower(b.Channel)]
		if !hot {
			m := q21ChannelID.FindStringSubmatch(b.URL)
			if m == nil {
				continue
			}
			id = m[2]
		}
		out = append(out, Q21Row{b.Auction, b.Bidder, b.Price, b.Channel, id})
	}
	return out
}

// Q22Row is a bid with the first three directories of its URL (query 22).
// A directory the URL does not have, SQL's NULL, is "".
type Q22Row struct {
	Auction, Bidder, Price    int64
	Channel, Dir1, Dir2, Dir3 string
}

// Q22 splits each bid's URL at every "/" and adds the parts at indexes 3,
// 4 and 5 (from 0), as SPLIT_INDEX does.
func Q22(events []Event) []Q22Row {
	out := q22(events)
	slices.SortFunc(out, func(x, y Q22Row) int {
		return cmp.Or(cmp.Compare(x.Auction, y.Auction), cmp.Compare(x.Bidder, y.Bidder),
			cmp.Compare(x.Price, y.Price), cmp.Compare(x.Channel, y.Channel),
			cmp.Compare(x.Dir1, y.Dir1), cmp.Compare(x.Dir2, y.Dir2), cmp.Compare(x.Dir3, y.Dir3))
	})
	return out
}

func q22(events []Event) []Q22Row {
	var out []Q22Row
	for _, b := range bids(events) {
		parts := strings.Split(b.URL, "/")
		dir := func(i int) string {
			if i < len(parts) {
				return parts[i]
			}
			return ""
		}
		out = append(out, Q22Row{b.Auction, b.Bidder, b.Price, b.Channel, dir(3), dir(4), dir(5)})
	}
	return out
}
