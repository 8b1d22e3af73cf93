package operator

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"unicode/utf8"
)

func TestJSONField(t *testing.T) {
	tests := []struct {
		data     string
		field    string
		want     string
		isString bool
		err      bool
		missing  bool
	}{
		{data: `{"user":"u1","ts":5}`, field: "user", want: "u1", isString: true},
		{data: `{"user":"u1","ts":5}`, field: "ts", want: "5"},
		{data: ` { "a" : [1, {"user": "x"}], "user" : "deep\"er" } `, field: "user", want: `deep"er`, isString: true},
		{data: `{"n":-1.5e3,"b":true,"z":null,"o":{"k":[]},"s":"\u00e9\ud83d\ude00"}`, field: "s", want: "é😀", isString: true},
		{data: `{"n":-1.5e3}`, field: "n", want: "-1.5e3"},
		{data: `{"o":{"k":[1,2]}}`, field: "o", want: `{"k":[1,2]}`},
		{data: `{"us\u0065r":"escaped key"}`, field: "user", want: "escaped key", isString: true},
		{data: `{}`, field: "user", missing: true},
		{data: `{"other":1}`, field: "user", missing: true},
		{data: `[1]`, field: "user", err: true},
		{data: `{"user":`, field: "user", err: true},
		{data: `{"a":"unterminated}`, field: "user", err: true},
		{data: `not json`, field: "user", err: true},
		{data: ``, field: "user", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			got, isString, err := JSONField([]byte(tt.data), tt.field, nil)
			switch {
			case tt.missing:
				if !errors.Is(err, errNoField) {
					t.Fatalf("err %v, want errNoField", err)
				}
			case tt.err:
				if err == nil || errors.Is(err, errNoField) {
					t.Fatalf("err %v, want a syntax error", err)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tt.want || isString != tt.isString:
				t.Fatalf("got %q (string %v), want %q (string %v)", got, isString, tt.want, tt.isString)
			}
		})
	}
}

// TestJSONMember reads members as written.
func TestJSONMember(t *testing.T) {
	tests := []struct {
		data, field, want string
		err               error // errNoField, or nil for a syntax error when want is ""
	}{
		{data: `{"event_type":2,"bid":{"auction":1,"url":"a\"b"},"dateTime":5}`, field: "bid", want: `{"auction":1,"url":"a\"b"}`},
		{data: ` { "s" : "x\u0041" } `, field: "s", want: `"x\u0041"`},
		{data: `{"a":[1, 2 ],"n":null}`, field: "a", want: `[1, 2 ]`},
		{data: `{"a":[1],"n":null}`, field: "n", want: `null`},
		{data: `{"b\u0069d":-1.5}`, field: "bid", want: `-1.5`},
		{data: `{"a":1}`, field: "bid", err: errNoField},
		{data: `{"bid":{"a":}`, field: "bid"},
		{data: `["bid"]`, field: "bid"},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			got, err := JSONMember([]byte(tt.data), tt.field, nil)
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
			case tt.want == "":
				if err == nil || errors.Is(err, errNoField) {
					t.Fatalf("got %q, %v; want a syntax error", got, err)
				}
			case err != nil || string(got) != tt.want:
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		v        string
		isString bool
		want     int64
		err      bool
	}{
		{v: "1700000000000", want: 1700000000000},
		{v: "-5", want: -5},
		{v: "1700000000000.9", want: 1700000000000},
		{v: "1.7e12", want: 1700000000000},
		{v: "2023-11-14T22:13:20Z", isString: true, want: 1700000000000},
		{v: "2023-11-14T23:13:20.5+01:00", isString: true, want: 1700000000500},
		{v: "yesterday", isString: true, err: true},
		{v: "true", err: true},
		// Integers are exact over the whole int64 range, 19 digits too.
		{v: "123456789012345678", want: 123456789012345678},
		{v: "1234567890123456789", want: 1234567890123456789},
		{v: "9007199254740993", want: 9007199254740993},
		{v: "9223372036854775806", want: math.MaxInt64 - 1},
		{v: "9223372036854775807", want: math.MaxInt64},
		{v: "-9223372036854775807", want: math.MinInt64 + 1},
		{v: "-9223372036854775808", want: math.MinInt64},
		{v: "-1234567890123456789", want: -1234567890123456789},
		{v: "0", want: 0},
		{v: "-0", want: 0},
		{v: "9223372036854775808", err: true},
		{v: "-9223372036854775809", err: true},
		{v: "10000000000000000000", err: true},
		{v: "99999999999999999999", err: true},
		{v: "-", err: true},
		// A fraction is truncated toward zero, the integer part exact.
		{v: "9223372036854775807.9", want: math.MaxInt64},
		{v: "-9223372036854775808.9", want: math.MinInt64},
		{v: "1234567890123456789.5", want: 1234567890123456789},
		{v: "-1.5", want: -1},
		{v: "-0.5", want: 0},
		{v: "9223372036854775808.0", err: true},
		// An exponent goes through float64: exact where float64 is.
		{v: "1.7e12", want: 1700000000000},
		{v: "-9.223372036854775808e18", want: math.MinInt64},
		{v: "9.223372036854775807e18", err: true},
		{v: "1e19", err: true},
		{v: "1e400", err: true},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp([]byte(tt.v), tt.isString)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseTimestamp(%q) = %d, %v; want %d, err %v", tt.v, got, err, tt.want, tt.err)
		}
	}
}

func TestJSONFieldAllocatesNothingForPlainValues(t *testing.T) {
	data := []byte(`{"page":"/p1","user":"u42","amount":17,"ts":1700000000000}`)
	allocs := testing.AllocsPerRun(100, func() {
		v, s, err := JSONField(data, "ts", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseTimestamp(v, s); err != nil {
			t.Fatal(err)
		}
		if _, _, err := JSONField(data, "user", nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

// FuzzJSONField checks the scanner against encoding/json: for any valid
// UTF-8 object, the first top-level "user" field reads the same, by
// JSONField and, as written, by JSONMember.
func FuzzJSONField(f *testing.F) {
	for _, s := range []string{`{"user":"u1","ts":5}`, `{"a":{"user":[1,"x"]},"user":"\n\u0041"}`, `{"user":1e3}`, `{}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) || !json.Valid(data) {
			return
		}
		raw, found, isObject := firstField(data, "user")
		if !isObject {
			return
		}
		got, isString, err := JSONField(data, "user", nil)
		if !found {
			if err == nil {
				t.Fatalf("found %q in an object without the field", got)
			}
			return
		}
		if err != nil {
			t.Fatalf("valid object %q: %v", data, err)
		}
		member, err := JSONMember(data, "user", nil)
		if err != nil || !bytes.Equal(member, raw) {
			t.Fatalf("JSONMember: got %q (%v), want %q", member, err, raw)
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if !isString || string(got) != s {
				t.Fatalf("string field: got %q, want %q", got, s)
			}
		} else if isString {
			t.Fatalf("%q read as a string", raw)
		}
	})
}

// firstField finds the first top-level field name of a JSON object with
// encoding/json's tokenizer.
func firstField(data []byte, name string) (raw json.RawMessage, found, isObject bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, false
		}
		if tok == name {
			return v, true, true
		}
	}
	return nil, false, true
}

// TestParseTimestampOutOfRange checks that an integer outside the int64
// range is refused with an error that says so.
func TestParseTimestampOutOfRange(t *testing.T) {
	for _, v := range []string{"9223372036854775808", "-9223372036854775809", "12345678901234567890123", "9223372036854775808.5", "1e19"} {
		_, err := ParseTimestamp([]byte(v), false)
		want := "timestamp " + v + ": out of range: milliseconds must be from -9223372036854775808 to 9223372036854775807"
		if err == nil || err.Error() != want {
			t.Errorf("ParseTimestamp(%s): %v, want %q", v, err, want)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		v    string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"-42", -42, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"09223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"1.5", 0, false},
		{"+1", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt([]byte(tt.v))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAddTimeSaturates(t *testing.T) {
	tests := []struct {
		a, b, add, sub int64
	}{
		{1, 2, 3, -1},
		{math.MaxInt64, 0, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64 - 1, 1, math.MaxInt64, math.MaxInt64 - 2},
		{math.MaxInt64 - 1, 2, math.MaxInt64, math.MaxInt64 - 3},
		{math.MaxInt64, 3600000, math.MaxInt64, math.MaxInt64 - 3600000},
		{math.MinInt64, -1, math.MinInt64, math.MinInt64 + 1},
		{math.MinInt64 + 1, 1, math.MinInt64 + 2, math.MinInt64},
		{math.MinInt64, 5, math.MinInt64 + 5, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1, math.MaxInt64},
		{-5, math.MaxInt64, math.MaxInt64 - 5, math.MinInt64},
	}
	for _, tt := range tests {
		if got := AddTime(tt.a, tt.b); got != tt.add {
			t.Errorf("AddTime(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.add)
		}
		if got := SubTime(tt.a, tt.b); got != tt.sub {
			t.Errorf("SubTime(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.sub)
		}
	}
}

// A Nexmark bid event in the generator's layout.
const nexmarkBid = `{"event_type":2,"person":null,"auction":null,"bid":{"auction":1002,"bidder":1001,"price":336411,"channel":"Baidu","url":"https://www.nexmark.com/mhyf/gii/iny/item.htm?query=1","dateTime":1700000000040,"extra":"vkbizmhfqbdkmclmoqaxwqhvoazbbnzvdsfnoreqpkjszlzdfsmbgxzcrplexu"},"dateTime":1700000000040}`

// BenchmarkJSONMember takes the bid out of a Nexmark bid event, as
// `extract: {field: bid}` does.
func BenchmarkJSONMember(b *testing.B) {
	data := []byte(nexmarkBid)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := JSONMember(data, "bid", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONFieldAfterStrings reads the last member of the bid, past
// its strings, as a key_by.field does.
func BenchmarkJSONFieldAfterStrings(b *testing.B) {
	data, err := JSONMember([]byte(nexmarkBid), "bid", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := JSONField(data, "extra", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPlainUntil puts each byte that ends a plain run, and bytes that do
// not, at every place of a buffer, and compares with a byte loop.
func TestPlainUntil(t *testing.T) {
	naive := func(data []byte, i int) int {
		for ; i < len(data); i++ {
			if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(data)
	}
	for _, special := range []byte{'"', '\\', 0x00, 0x1f, 0x0a} {
		for _, filler := range []byte{'a', ' ', '!', '#', '[', ']', 0x7f, 0x80, 0xff, 0x21} {
			for n := range 20 {
				for at := range n + 1 {
					data := bytes.Repeat([]byte{filler}, n)
					if at < n {
						data[at] = special
					}
					for from := range n + 1 {
						got := plainUntil(data, from)
						want := naive(data, from)
						// plainUntil may stop short, at the start of the last
						// few bytes, but never past a special byte.
						if got != want && (got > want || len(data)-got >= 8) {
							t.Fatalf("plainUntil(%q, %d) = %d, want %d", data, from, got, want)
						}
					}
				}
			}
		}
	}
}

// digitsUntil stops at the first byte that is not a decimal digit, for
// every byte value at every position of a run of digits.
func TestDigitsUntil(t *testing.T) {
	for other := range 256 {
		if other >= '0' && other <= '9' {
			continue
		}
		for n := range 20 {
			for at := range n + 1 {
				data := make([]byte, n)
				for i := range data {
					data[i] = '0' + byte(i*7%10)
				}
				if at < n {
					data[at] = byte(other)
				}
				for from := range n + 1 {
					want := from
					for want < n && data[want] >= '0' && data[want] <= '9' {
						want++
					}
					got := digitsUntil(data, from)
					// digitsUntil may stop short, at the start of the last
					// few bytes, but never past a byte that is not a digit.
					if got != want && (got > want || n-got >= 8) {
						t.Fatalf("digitsUntil(%q, %d) = %d, want %d", data, from, got, want)
					}
				}
			}
		}
	}
}

// FuzzSkipCompact checks that skipCompact accepts only what the scanner's
// full path accepts, ending at the same byte, and accepts compact JSON.
func FuzzSkipCompact(f *testing.F) {
	for _, s := range []string{nexmarkBid, `{"a":[1,{"b":"\"x"},[]],"c":{}}`, `[true,false,null,-1.5e3]`, `"a\\"`, `{"a" :1}`, `[1,]`, `{"a":1`, `[[[[0]]]]`, `nul`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end, ok := skipCompact(data, 0)
		full := jsonScanner{data: data}
		// The full path alone: skipValue above the top depth.
		err := full.skipValue(1)
		if ok && (err != nil || full.pos != end) {
			t.Fatalf("%q: skipCompact ends at %d, the scanner at %d (%v)", data, end, full.pos, err)
		}
		compact := err == nil && !bytes.ContainsAny(data[:full.pos], " \t\r\n") && bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= maxCompactDepth
		if compact && json.Valid(data[:full.pos]) && !ok {
			t.Fatalf("%q: skipCompact refuses compact JSON", data)
		}
	})
}

// FuzzMemberCompact checks that memberCompact answers only where the
// scanner's full path answers the same: the member's value at the same
// byte, or no such member.
func FuzzMemberCompact(f *testing.F) {
	for _, s := range []string{nexmarkBid, `{"a":1,"bid":2}`, `{"b\u0069d":1}`, `{"bi\\d":1}`, `{}`, `{"a":1 ,"bid":2}`, `{"a":1}x`, `{"a":[1,}`} {
		f.Add([]byte(s), "bid")
		f.Add([]byte(s), `bi\d`)
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		value, found, ok := memberCompact(data, 0, name)
		if !ok {
			return
		}
		full := jsonScanner{data: data}
		full.space()
		if !full.consume('{') {
			t.Fatalf("%q: memberCompact answers for a value that is not an object", data)
		}
		// The full path alone, as member runs it after its compact attempt.
		s := jsonScanner{data: data}
		err := s.memberFull(name, nil)
		switch {
		case found && (err != nil || s.pos != value):
			t.Fatalf("%q, %q: memberCompact finds the value at %d, the scanner at %d (%v)", data, name, value, s.pos, err)
		case !found && err != errNoField:
			t.Fatalf("%q, %q: memberCompact finds no member, the scanner says %v at %d", data, name, err, s.pos)
		}
	})
}
