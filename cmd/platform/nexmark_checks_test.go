package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"wasmstream.io/platform/internal/nexmark"
)

// A nexmarkCheck turns a query's sink records into rows of its reference,
// and computes the reference's rows over the events, both formatted.
type nexmarkCheck func(records [][]byte, events []nexmark.Event) (got, want []string, err error)

// decodeAll decodes every record into an O, strictly: each member must be
// a column of O, and converts it with row.
func decodeAll[O, R any](records [][]byte, row func(O) (R, error)) ([]R, error) {
	var out []R
	for _, rec := range records {
		var o O
		d := json.NewDecoder(bytes.NewReader(rec))
		d.DisallowUnknownFields()
		if err := d.Decode(&o); err != nil {
			return nil, fmt.Errorf("%s: %w", rec, err)
		}
		r, err := row(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rec, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// formatted formats rows with %+v.
func formatted[R any](rows []R) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%+v", r)
	}
	return out
}

// check makes the check of a query whose rows are appended (not updated):
// every record is a row.
func check[O, R any](row func(O) (R, error), reference func([]nexmark.Event) []R) nexmarkCheck {
	return func(records [][]byte, events []nexmark.Event) ([]string, []string, error) {
		got, err := decodeAll(records, row)
		return formatted(got), formatted(reference(events)), err
	}
}

// upserts makes the check of a query whose records update rows: the last
// record of each key is the row.
func upserts[O, R any, K comparable](row func(O) (R, error), key func(R) K, reference func([]nexmark.Event) []R) nexmarkCheck {
	return func(records [][]byte, events []nexmark.Event) ([]string, []string, error) {
		all, err := decodeAll(records, row)
		last := map[K]R{}
		for _, r := range all {
			last[key(r)] = r
		}
		var got []R
		for _, r := range last {
			got = append(got, r)
		}
		return formatted(got), formatted(reference(events)), err
	}
}

// same is the row conversion of an output type that is the row.
func same[R any](r R) (R, error) { return r, nil }

// thousandths reads a DECIMAL(23, 3) as written: digits, a point and
// three digits.
func thousandths(n json.Number) (int64, error) {
	s := string(n)
	dot := strings.IndexByte(s, '.')
	if dot < 0 || len(s)-dot != 4 {
		return 0, fmt.Errorf("price %s: not a decimal with three digits after the point", s)
	}
	return strconv.ParseInt(s[:dot]+s[dot+1:], 10, 64)
}

// The sinks' columns of the queries whose columns differ from the
// reference's fields.
type (
	eurosBid struct {
		Auction, Bidder int64
		Price           json.Number
		DateTime        int64 `json:"dateTime"`
		Extra           string
	}
	countResult struct {
		Key   string
		Start int64 `json:"window_start"`
		End   int64 `json:"window_end"`
		Value int64
	}
	q5Out struct {
		Auction, Num int64
		Start        int64 `json:"window_start"`
		End          int64 `json:"window_end"`
	}
	q7Out struct {
		Auction, Bidder, Price, DateTime int64
		Extra                            string
		WindowEnd                        int64 `json:"window_end"`
	}
	q8Out struct {
		ID        int64
		Name      string
		Starttime int64
	}
	q14Out struct {
		Auction, Bidder int64
		Price           json.Number
		BidTimeType     string `json:"bidTimeType"`
		DateTime        int64  `json:"dateTime"`
		Extra           string
		CCounts         int64 `json:"c_counts"`
	}
	statsOut struct {
		Channel, Day, Minute string
		TB                   int64 `json:"total_bids"`
		R1B                  int64 `json:"rank1_bids"`
		R2B                  int64 `json:"rank2_bids"`
		R3B                  int64 `json:"rank3_bids"`
		TD                   int64 `json:"total_bidders"`
		R1D                  int64 `json:"rank1_bidders"`
		R2D                  int64 `json:"rank2_bidders"`
		R3D                  int64 `json:"rank3_bidders"`
		TA                   int64 `json:"total_auctions"`
		R1A                  int64 `json:"rank1_auctions"`
		R2A                  int64 `json:"rank2_auctions"`
		R3A                  int64 `json:"rank3_auctions"`
	}
	q17Out struct {
		Auction   int64
		Day       string
		TotalBids int64 `json:"total_bids"`
		Rank1Bids int64 `json:"rank1_bids"`
		Rank2Bids int64 `json:"rank2_bids"`
		Rank3Bids int64 `json:"rank3_bids"`
		MinPrice  int64 `json:"min_price"`
		MaxPrice  int64 `json:"max_price"`
		AvgPrice  int64 `json:"avg_price"`
		SumPrice  int64 `json:"sum_price"`
	}
	q19Out struct {
		nexmark.BidRow
		RankNumber int64 `json:"rank_number"`
	}
	q21Out struct {
		Auction, Bidder, Price int64
		Channel                string
		ChannelID              string `json:"channel_id"`
	}
	q22Out struct {
		Auction, Bidder, Price int64
		Channel                string
		Dir1, Dir2, Dir3       *string
	}
)

func (s statsOut) stats() nexmark.BidStats {
	return nexmark.BidStats{Bids: [4]int64{s.TB, s.R1B, s.R2B, s.R3B}, Bidders: [4]int64{s.TD, s.R1D, s.R2D, s.R3D},
		Auctions: [4]int64{s.TA, s.R1A, s.R2A, s.R3A}}
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// nexmarkChecks has the check of every query with a spec.
var nexmarkChecks = map[string]nexmarkCheck{
	"q0": check(same[nexmark.Q0Row], nexmark.Q0),
	"q1": check(func(o eurosBid) (nexmark.Q1Row, error) {
		p, err := thousandths(o.Price)
		return nexmark.Q1Row{Auction: o.Auction, Bidder: o.Bidder, Price: p, DateTime: o.DateTime, Extra: o.Extra}, err
	}, nexmark.Q1),
	"q2": check(same[nexmark.Q2Row], nexmark.Q2),
	"q3": check(same[nexmark.Q3Row], nexmark.Q3),
	"q4": upserts(same[nexmark.Q4Row], func(r nexmark.Q4Row) int64 { return r.Category }, nexmark.Q4),
	"q5": check(func(o q5Out) (nexmark.Q5Row, error) {
		return nexmark.Q5Row{WindowStart: o.Start, WindowEnd: o.End, Auction: o.Auction, Num: o.Num}, nil
	}, nexmark.Q5),
	"q7": check(func(o q7Out) (nexmark.Q7Row, error) {
		return nexmark.Q7Row{WindowEnd: o.WindowEnd, Auction: o.Auction, Bidder: o.Bidder, Price: o.Price, DateTime: o.DateTime, Extra: o.Extra}, nil
	}, nexmark.Q7),
	"q8": check(func(o q8Out) (nexmark.Q8Row, error) {
		return nexmark.Q8Row{ID: o.ID, Name: o.Name, Start: o.Starttime}, nil
	}, nexmark.Q8),
	"q9": check(func(o struct {
		nexmark.Q9Row
		BidDateTime int64  `json:"bid_dateTime"`
		BidExtra    string `json:"bid_extra"`
	}) (nexmark.Q9Row, error) {
		r := o.Q9Row
		r.BidDateTime, r.BidExtra = o.BidDateTime, o.BidExtra
		return r, nil
	}, nexmark.Q9),
	"q10": check(same[nexmark.Q10Row], nexmark.Q10),
	"q11": check(func(o countResult) (nexmark.Q11Row, error) {
		b, err := strconv.ParseInt(o.Key, 10, 64)
		return nexmark.Q11Row{Bidder: b, Count: o.Value, Start: o.Start, End: o.End}, err
	}, nexmark.Q11),
	"q12": q12Check,
	"q13": check(same[nexmark.Q13Row], nexmark.Q13),
	"q14": check(func(o q14Out) (nexmark.Q14Row, error) {
		p, err := thousandths(o.Price)
		return nexmark.Q14Row{Auction: o.Auction, Bidder: o.Bidder, Price: p, BidTimeType: o.BidTimeType,
			DateTime: o.DateTime, Extra: o.Extra, CCounts: o.CCounts}, err
	}, nexmark.Q14),
	"q15": check(func(o statsOut) (nexmark.Q15Row, error) {
		if o.Channel != "" || o.Minute != "" {
			return nexmark.Q15Row{}, fmt.Errorf("a channel or minute in query 15's row")
		}
		return nexmark.Q15Row{Day: o.Day, BidStats: o.stats()}, nil
	}, nexmark.Q15),
	"q16": check(func(o statsOut) (nexmark.Q16Row, error) {
		return nexmark.Q16Row{Channel: o.Channel, Day: o.Day, Minute: o.Minute, BidStats: o.stats()}, nil
	}, nexmark.Q16),
	"q17": check(func(o q17Out) (nexmark.Q17Row, error) { return nexmark.Q17Row(o), nil }, nexmark.Q17),
	"q18": upserts(same[nexmark.BidRow], func(r nexmark.BidRow) [2]int64 { return [2]int64{r.Bidder, r.Auction} }, nexmark.Q18),
	"q19": upserts(func(o q19Out) (nexmark.Q19Row, error) {
		return nexmark.Q19Row{BidRow: o.BidRow, RankNumber: o.RankNumber}, nil
	},
		func(r nexmark.Q19Row) [2]int64 { return [2]int64{r.Auction, r.RankNumber} }, nexmark.Q19),
	"q20": check(func(o struct {
		Auction, Bidder, Price int64
		Channel, URL           string
		BidDateTime            int64  `json:"bid_dateTime"`
		BidExtra               string `json:"bid_extra"`
		ItemName               string `json:"itemName"`
		Description            string
		InitialBid             int64 `json:"initialBid"`
		Reserve                int64
		AuctionDateTime        int64 `json:"auction_dateTime"`
		Expires                int64
		Seller, Category       int64
		AuctionExtra           string `json:"auction_extra"`
	}) (nexmark.Q20Row, error) {
		return nexmark.Q20Row(o), nil
	}, nexmark.Q20),
	"q21": check(func(o q21Out) (nexmark.Q21Row, error) { return nexmark.Q21Row(o), nil }, nexmark.Q21),
	"q22": check(func(o q22Out) (nexmark.Q22Row, error) {
		return nexmark.Q22Row{Auction: o.Auction, Bidder: o.Bidder, Price: o.Price, Channel: o.Channel,
			Dir1: orEmpty(o.Dir1), Dir2: orEmpty(o.Dir2), Dir3: orEmpty(o.Dir3)}, nil
	}, nexmark.Q22),
}

// q12Check sums query 12's counts per bidder: its windows are of
// processing time.
func q12Check(records [][]byte, events []nexmark.Event) ([]string, []string, error) {
	counts, err := decodeAll(records, same[countResult])
	sums := map[int64]int64{}
	for _, c := range counts {
		b, perr := strconv.ParseInt(c.Key, 10, 64)
		if perr != nil && err == nil {
			err = perr
		}
		sums[b] += c.Value
	}
	var got []nexmark.Q12Row
	for b, n := range sums {
		got = append(got, nexmark.Q12Row{Bidder: b, Count: n})
	}
	return formatted(got), formatted(nexmark.Q12(events)), err
}
