package main

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	udf "wasmstream.io/platform/sdk/go"
)

// bidRecord is a bid event as the generator writes it.
func bidRecord(auction, bidder, price int64, channel, url string, at int64, extra string) udf.Record {
	return udf.Record{Timestamp: at, Value: fmt.Appendf(nil,
		`{"event_type":2,"person":null,"auction":null,"bid":{"auction":%d,"bidder":%d,"price":%d,"channel":%q,"url":%q,"dateTime":%d,"extra":%q},"dateTime":%d}`,
		auction, bidder, price, channel, url, at, extra, at)}
}

func values(t *testing.T, outs []udf.Output, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, o := range outs {
		if o.Err != "" {
			vs = append(vs, "error: "+o.Err)
			continue
		}
		vs = append(vs, string(o.Record.Value))
	}
	return vs
}

// at10 is 2023-11-14T10:13:20Z, at22 the same at 22:13:20.
const (
	at10 = 1_699_956_800_000
	at22 = 1_700_000_000_000
)

func TestFlatMaps(t *testing.T) {
	b := bidRecord(246, 7, 1_234_567, "Google", "https://www.nexmark.com/ab/c_d/efg/item.htm?query=1", at10, "xcc c")
	ch := bidRecord(1000, 8, 5, "channel-42", "https://www.nexmark.com/a/b/c/item.htm?query=1&channel_id=99&x=1", at22, "")
	short := bidRecord(1001, 9, 100, "channel-7", "channel_id=5", at22, "")
	person := udf.Record{Value: []byte(`{"event_type":0,"person":{"id":1,"name":"A B","emailAddress":"a@b.com","creditCard":"1","city":"Bend","state":"OR","dateTime":5,"extra":""},"auction":null,"bid":null,"dateTime":5}`)}
	tests := []struct {
		function string
		in       []udf.Record
		want     []string
	}{
		{"q0", []udf.Record{b, person}, []string{`{"auction":246,"bidder":7,"price":1234567,"dateTime":1699956800000,"extra":"xcc c"}`}},
		// Another layout, and escapes: read by json.Lookup, the same rows.
		{"q0", []udf.Record{{Value: []byte(` {"bid": {"extra":"x\u0063c c", "dateTime":1699956800000, "url":"", "channel":"G", "price":1234567, "bidder":7, "auction":246}, "event_type":2}`)}},
			[]string{`{"auction":246,"bidder":7,"price":1234567,"dateTime":1699956800000,"extra":"x\u0063c c"}`}},
		{"q14", []udf.Record{{Value: []byte(`{"event_type":2,"bid":{"auction":246,"bidder":7,"price":1234567,"channel":"G","url":"","dateTime":1699956800000,"extra":"x\u0063c c"}}`)}},
			[]string{`{"auction":246,"bidder":7,"price":1120986.836,"bidTimeType":"dayTime","dateTime":1699956800000,"extra":"x\u0063c c","c_counts":3}`}},
		{"q1", []udf.Record{b, ch}, []string{
			`{"auction":246,"bidder":7,"price":1120986.836,"dateTime":1699956800000,"extra":"xcc c"}`,
			`{"auction":1000,"bidder":8,"price":4.540,"dateTime":1700000000000,"extra":""}`,
		}},
		{"q2", []udf.Record{b, ch, person}, []string{`{"auction":246,"price":1234567}`}},
		{"q10", []udf.Record{ch}, []string{`{"auction":1000,"bidder":8,"price":5,"dateTime":1700000000000,"extra":"","dt":"2023-11-14","hm":"22:13"}`}},
		{"q14", []udf.Record{b, ch}, []string{`{"auction":246,"bidder":7,"price":1120986.836,"bidTimeType":"dayTime","dateTime":1699956800000,"extra":"xcc c","c_counts":3}`}},
		{"q21", []udf.Record{b, ch, short, bidRecord(1, 1, 1, "channel-1", "https://x/channel_id=3", at22, "")}, []string{
			`{"auction":246,"bidder":7,"price":1234567,"channel":"Google","channel_id":"1"}`,
			`{"auction":1000,"bidder":8,"price":5,"channel":"channel-42","channel_id":"99"}`,
			`{"auction":1001,"bidder":9,"price":100,"channel":"channel-7","channel_id":"5"}`,
		}},
		{"q22", []udf.Record{b, short, bidRecord(1, 1, 1, "c", "https://x/", at22, "")}, []string{
			`{"auction":246,"bidder":7,"price":1234567,"channel":"Google","dir1":"ab","dir2":"c_d","dir3":"efg"}`,
			`{"auction":1001,"bidder":9,"price":100,"channel":"channel-7","dir1":null,"dir2":null,"dir3":null}`,
			`{"auction":1,"bidder":1,"price":1,"channel":"c","dir1":"","dir2":null,"dir3":null}`,
		}},
		// A string unescaped after one that was not must not be written
		// over the batch's records.
		{"q22", []udf.Record{b, {Value: []byte(`{"event_type":2,"bid":{"auction":1,"bidder":1,"price":1,"channel":"c","url":"https:\/\/x\/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\/b\/c","dateTime":1,"extra":""}}`)}, b}, []string{
			`{"auction":246,"bidder":7,"price":1234567,"channel":"Google","dir1":"ab","dir2":"c_d","dir3":"efg"}`,
			`{"auction":1,"bidder":1,"price":1,"channel":"c","dir1":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","dir2":"b","dir3":"c"}`,
			`{"auction":246,"bidder":7,"price":1234567,"channel":"Google","dir1":"ab","dir2":"c_d","dir3":"efg"}`,
		}},
		{"pair_key", []udf.Record{ch}, []string{`{"k":"8 1000","b":{"auction":1000,"bidder":8,"price":5,"channel":"channel-42","url":"https://www.nexmark.com/a/b/c/item.htm?query=1&channel_id=99&x=1","dateTime":1700000000000,"extra":""}}`}},
		{"bids", []udf.Record{{Value: []byte(`{"event_type":7}`)}, {Value: []byte(`{"event_type":2,"bid":null}`)}}, []string{
			"error: not a Nexmark event: no event_type 0, 1 or 2",
			"error: an event of event_type 2 without a bid object",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			outs, err := udf.Invoke(tt.function, tt.in)
			if got := values(t, outs, err); !slices.Equal(got, tt.want) {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestDates(t *testing.T) {
	for ms := int64(-100 * msPerDay); ms < 200*365*msPerDay; ms += 7*msPerDay + 3*msPerHour + 17*msPerMinute + 999 {
		tm := time.UnixMilli(ms).UTC()
		if got, want := string(appendDay(nil, ms)), tm.Format("2006-01-02"); got != want {
			t.Fatalf("appendDay(%d) = %s, want %s", ms, got, want)
		}
		if got, want := string(appendMinute(nil, ms)), tm.Format("15:04"); got != want {
			t.Fatalf("appendMinute(%d) = %s, want %s", ms, got, want)
		}
	}
}

func TestUntag(t *testing.T) {
	for _, tt := range []struct {
		in      string
		tag     byte
		payload string
	}{
		{`{"k":12,"a":{"id":12}}`, 'a', `{"id":12}`},
		{`{"k":"x\"y","b":7}`, 'b', `7`},
	} {
		tag, payload, err := untag([]byte(tt.in))
		if err != nil || tag != tt.tag || string(payload) != tt.payload {
			t.Errorf("untag(%s) = %c %s %v", tt.in, tag, payload, err)
		}
	}
	for _, bad := range []string{`{"id":1}`, `{"k":1}`, `{"k":1,"ab":2}`, `{"k":"open,"a":1}`} {
		if _, _, err := untag([]byte(bad)); err == nil {
			t.Errorf("untag(%s) is not an error", bad)
		}
	}
}

func TestWinningHarness(t *testing.T) {
	h := udf.NewHarness("q9_close")
	auctionRec := udf.Record{Timestamp: 100, Value: []byte(`{"k":5,"a":{"id":5,"itemName":"i","description":"d","initialBid":1,"reserve":2,"dateTime":100,"expires":200,"seller":3,"category":10,"extra":""}}`)}
	bidRec := func(price, at int64) udf.Record {
		return udf.Record{Timestamp: at, Value: fmt.Appendf(nil, `{"k":5,"b":{"auction":5,"bidder":9,"price":%d,"channel":"c","url":"u","dateTime":%d,"extra":"e%d"}}`, price, at, at)}
	}
	key := []byte("5")
	// A bid at the auction's time, before it, counts; one at expires too;
	// one after does not; equal prices keep the earlier.
	steps := [][]udf.Record{{bidRec(50, 100)}, {auctionRec, bidRec(70, 150)}, {bidRec(70, 200), bidRec(90, 201)}}
	for _, recs := range steps {
		if outs, err := h.Process("winning", key, recs...); err != nil || len(outs) != 0 {
			t.Fatalf("process: %v %v", outs, err)
		}
	}
	outs, err := h.AdvanceWatermark(200)
	want := []string{`{"id":5,"itemName":"i","description":"d","initialBid":1,"reserve":2,"dateTime":100,"expires":200,"seller":3,"category":10,"extra":"","auction":5,"bidder":9,"price":70,"bid_dateTime":150,"bid_extra":"e150"}`}
	if got := values(t, outs, err); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, ok := h.Value("win_auction", key); ok {
		t.Fatal("the auction is kept after it closed")
	}
}

func TestInteger(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int64
		end  int
		good bool
	}{
		{"0,", 0, 1, true}, {"7}", 7, 1, true}, {"12345678,", 12345678, 8, true}, {"123456789", 123456789, 9, true},
		{"1700000000040}abcdefgh", 1700000000040, 13, true}, {"-42,xxxxxxxxx", -42, 3, true},
		{"999999999999999999,", 999999999999999999, 18, true}, {"1234567890123456789,", 0, 19, false},
		{"01,", 0, 2, false}, {"-0,", 0, 2, false}, {"-,", 0, 1, false}, {",1", 0, 0, false}, {"12/45678901", 12, 2, true},
		{"12:45678901", 12, 2, true}, {"1\x002345678", 1, 1, true}, {"1\xff2345678", 1, 1, true},
	} {
		n, end, ok := integer([]byte(tt.in), 0)
		if ok != tt.good || ok && (n != tt.n || end != tt.end) {
			t.Errorf("integer(%q) = %d, %d, %v; want %d, %d, %v", tt.in, n, end, ok, tt.n, tt.end, tt.good)
		}
	}
	for i := int64(0); i < 2_000_000; i += 7919 {
		for _, tail := range []string{"", "}", ",\"x\":123456789"} {
			s := strconv.FormatInt(i*1_000_003, 10)
			n, end, ok := integer([]byte(s+tail), 0)
			if !ok || n != i*1_000_003 || end != len(s) {
				t.Fatalf("integer(%q) = %d, %d, %v", s+tail, n, end, ok)
			}
		}
	}
}

func TestPlainString(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{`"abc",`, `"abc"`}, {`"",`, `""`}, {`"abcdefghijklmnopq"}`, `"abcdefghijklmnopq"`},
		{`"abcdefghij\"k"`, ""}, {"\"abcdefghij\nk\"", ""}, {`"abcdefghijkl`, ""}, {`x"`, ""},
	} {
		s, end, ok := plainString([]byte(tt.in), 0)
		if string(s) != tt.want || ok != (tt.want != "") || ok && end != len(tt.want) {
			t.Errorf("plainString(%q) = %q, %d, %v", tt.in, s, end, ok)
		}
	}
}
