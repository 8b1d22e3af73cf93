package json_test

import (
	"bytes"
	stdjson "encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"wasmstream.io/platform/sdk/go/json"
)

const doc = `{
	"auction": 1000, "bidder": -2001, "price": 12345,
	"ratio": -1.5e-3, "big": 1E+21, "zero": 0, "negzero": -0,
	"channel": "Goo\"gle\\\/\n\t\u00e9\u20ac\ud83d\ude00",
	"plain": "héllo wörld",
	"lone": "a\ud800b",
	"nested": {"a": {"b": [10, {"c": "deep"}, [true, false, null]]}, "empty": {}, "arr": []},
	"esc\u0061ped": "key with an escape",
	"dup": 1, "dup": 2,
	"max": 9223372036854775807, "min": -9223372036854775808, "over": 9223372036854775808,
	"frac": 1.0, "t": true, "f": false, "n": null,
	"skip": {"x": "}]{[\"", "y": [1, [2, [3]]]},
	"last": "end"
}`

func TestGet(t *testing.T) {
	tests := []struct {
		path []string
		raw  string
		kind json.Kind
	}{
		{[]string{"auction"}, `1000`, json.Number},
		{[]string{"bidder"}, `-2001`, json.Number},
		{[]string{"ratio"}, `-1.5e-3`, json.Number},
		{[]string{"big"}, `1E+21`, json.Number},
		{[]string{"channel"}, `"Goo\"gle\\\/\n\t\u00e9\u20ac\ud83d\ude00"`, json.String},
		{[]string{"nested"}, `{"a": {"b": [10, {"c": "deep"}, [true, false, null]]}, "empty": {}, "arr": []}`, json.Object},
		{[]string{"nested", "a", "b"}, `[10, {"c": "deep"}, [true, false, null]]`, json.Array},
		{[]string{"nested", "a", "b", "0"}, `10`, json.Number},
		{[]string{"nested", "a", "b", "1", "c"}, `"deep"`, json.String},
		{[]string{"nested", "a", "b", "2", "2"}, `null`, json.Null},
		{[]string{"nested", "a", "b", "2", "0"}, `true`, json.Bool},
		{[]string{"nested", "empty"}, `{}`, json.Object},
		{[]string{"nested", "arr"}, `[]`, json.Array},
		{[]string{"escaped"}, `"key with an escape"`, json.String},
		{[]string{"dup"}, `1`, json.Number},
		{[]string{"skip", "y", "1", "1", "0"}, `3`, json.Number},
		{[]string{"last"}, `"end"`, json.String},
		{[]string{"n"}, `null`, json.Null},
		{nil, strings.TrimSpace(doc), json.Object},
	}
	for _, tt := range tests {
		raw, kind, ok := json.Get([]byte(doc), tt.path...)
		if !ok || string(raw) != tt.raw || kind != tt.kind {
			t.Errorf("Get(%q) = %q, %v, %v; want %q, %v, true", tt.path, raw, kind, ok, tt.raw, tt.kind)
		}
	}
}

func TestGetMissing(t *testing.T) {
	for _, path := range [][]string{
		{"nothing"}, {"Auction"}, {"auction", "x"}, {"nested", "a", "b", "3"}, {"nested", "a", "b", "-1"},
		{"nested", "a", "b", "01"}, {"nested", "a", "b", "x"}, {"nested", "empty", "a"}, {"nested", "arr", "0"},
		{"channel", "0"}, {"escaped", "x"}, {"esc\\u0061ped"}, {""},
	} {
		if raw, kind, ok := json.Get([]byte(doc), path...); ok || raw != nil || kind != json.Invalid {
			t.Errorf("Get(%q) = %q, %v, %v; want nothing", path, raw, kind, ok)
		}
	}
}

func TestGetInt(t *testing.T) {
	tests := []struct {
		key  string
		want int64
		ok   bool
	}{
		{"auction", 1000, true},
		{"bidder", -2001, true},
		{"zero", 0, true},
		{"negzero", 0, true},
		{"max", math.MaxInt64, true},
		{"min", math.MinInt64, true},
		{"over", 0, false},
		{"frac", 0, false},
		{"ratio", 0, false},
		{"big", 0, false},
		{"channel", 0, false},
		{"t", 0, false},
		{"nothing", 0, false},
	}
	for _, tt := range tests {
		if got, ok := json.GetInt([]byte(doc), tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("GetInt(%q) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestGetFloat(t *testing.T) {
	tests := []struct {
		key  string
		want float64
		ok   bool
	}{
		{"auction", 1000, true},
		{"ratio", -0.0015, true},
		{"big", 1e21, true},
		{"frac", 1, true},
		{"max", 9223372036854775807, true},
		{"min", -9223372036854775808, true},
		{"negzero", math.Copysign(0, -1), true},
		{"channel", 0, false},
		{"n", 0, false},
		{"nothing", 0, false},
	}
	for _, tt := range tests {
		got, ok := json.GetFloat([]byte(doc), tt.key)
		if math.Float64bits(got) != math.Float64bits(tt.want) || ok != tt.ok {
			t.Errorf("GetFloat(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	for _, n := range []string{"0.1", "1e-7", "123456789012345678901234567890", "2.2250738585072014e-308", "4.9e-324",
		"1.7976931348623157e308", "0.30000000000000004", "9007199254740993", "1e22", "1e23", "-123.456e-5", "1e-400"} {
		got, ok := json.ParseFloat([]byte(n))
		var want float64
		if err := stdjson.Unmarshal([]byte(n), &want); err != nil || !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("ParseFloat(%s) = %v, %v; want %v (%v)", n, got, ok, want, err)
		}
	}
	for _, n := range []string{"1e400", "-1e400", "", "-", "1.", ".5", "01", "1e", "+1", "0x10", "1e+", "Infinity", "NaN"} {
		if got, ok := json.ParseFloat([]byte(n)); ok {
			t.Errorf("ParseFloat(%q) = %v, true; want false", n, got)
		}
	}
}

func TestGetBool(t *testing.T) {
	for _, tt := range []struct {
		key    string
		want   bool
		wantOK bool
	}{{"t", true, true}, {"f", false, true}, {"n", false, false}, {"zero", false, false}} {
		if got, ok := json.GetBool([]byte(doc), tt.key); got != tt.want || ok != tt.wantOK {
			t.Errorf("GetBool(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestGetString(t *testing.T) {
	tests := []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"channel"}, "Goo\"gle\\/\n\té€😀", true},
		{[]string{"plain"}, "héllo wörld", true},
		{[]string{"lone"}, "a\uFFFDb", true},
		{[]string{"nested", "a", "b", "1", "c"}, "deep", true},
		{[]string{"auction"}, "", false},
		{[]string{"nothing"}, "", false},
	}
	buf := make([]byte, 0, 4)
	for _, tt := range tests {
		var ok bool
		buf, ok = json.GetString(buf, []byte(doc), tt.path...)
		if string(buf) != tt.want || ok != tt.ok {
			t.Errorf("GetString(%q) = %q, %v; want %q, %v", tt.path, buf, ok, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct{ raw, want string }{
		{`\u0041\u00DF\uD834\uDD1E`, "Aß\U0001D11E"},
		{`\ud834`, "\uFFFD"},
		{`\udd1e\ud834`, "\uFFFD\uFFFD"},
		{`\ud834\u0041`, "\uFFFDA"},
		{`\b\f\r`, "\b\f\r"},
	} {
		if got, ok := json.AppendUnescaped(nil, []byte(tt.raw)); !ok || string(got) != tt.want {
			t.Errorf("AppendUnescaped(%s) = %q, %v; want %q", tt.raw, got, ok, tt.want)
		}
	}
	for _, raw := range []string{`\x`, `\u12`, `\u12g4`, `\`, "a\x01", `a"b`} {
		if got, ok := json.AppendUnescaped(nil, []byte(raw)); ok {
			t.Errorf("AppendUnescaped(%q) = %q, true; want false", raw, got)
		}
	}
}

// TestMalformed checks that malformed documents return !ok.
func TestMalformed(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a"`, `{"a":`, `{"a" 1}`, `{"a":1`, `{"a":1 "b":2}`, `{"b":1 "a":2}`, `{"a":1]`, `{"a":truex}`, `{"a":"x"y}`, `{a:1}`, `{"a":tru}`,
		`{"b":nul,"a":1}`, `{"b":"x,"a":1}`, `{"b":[1,"a":1}`, `{"b":{"c":1,"a":1}`, `{"a":"x` + "\x01" + `"}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.1}`, `{"a":1e}`, `{"a":+1}`, `{"a":"abc}`, `["x"`, `{"b":"\"}`,
		`{"b":-x,"a":1}`, `{"b":1e+,"a":1}`, `[1,,2]`, `{"a":}`, `{,"a":1}`,
	} {
		if raw, kind, ok := json.Get([]byte(in), "a"); ok {
			t.Errorf("Get(%q, a) = %q, %v, true; want false", in, raw, kind)
		}
		if raw, kind, ok := json.Get([]byte(in), "1"); ok && !strings.HasPrefix(in, "[1,") {
			t.Errorf("Get(%q, 1) = %q, %v, true; want false", in, raw, kind)
		}
	}
	if _, _, ok := json.Get([]byte(`[1,,2]`), "1"); ok {
		t.Error("Get([1,,2], 1) is ok")
	}
	for _, in := range []string{``, `tru`, `-`, `"abc`, `[1`, `{"a":1`, `nul`, `1 2`, `{} x`, `truex`} {
		if raw, kind, ok := json.Get([]byte(in)); ok {
			t.Errorf("Get(%q) = %q, %v, true; want false", in, raw, kind)
		}
	}
}

func TestLookup(t *testing.T) {
	keys := []string{"last", "channel", "nothing", "auction", "escaped", "dup", "nested", "t", "ratio", "lone"}
	values := make([]json.Value, len(keys)+1)
	values[len(keys)] = json.Value{Raw: []byte("x"), Kind: json.Null}
	if found := json.Lookup([]byte(doc), keys, values); found != len(keys)-1 {
		t.Fatalf("found %d, want %d", found, len(keys)-1)
	}
	for k, key := range keys {
		raw, kind, _ := json.Get([]byte(doc), key)
		if !bytes.Equal(values[k].Raw, raw) || values[k].Kind != kind {
			t.Errorf("%s: %q %v, want %q %v", key, values[k].Raw, values[k].Kind, raw, kind)
		}
	}
	if values[len(keys)].Kind != json.Null {
		t.Error("Lookup wrote past len(keys)")
	}
	if n, ok := values[3].Int(); n != 1000 || !ok {
		t.Errorf("auction: %d, %v", n, ok)
	}
	if s, ok := values[1].String(nil); string(s) != "Goo\"gle\\/\n\té€😀" || !ok {
		t.Errorf("channel: %q, %v", s, ok)
	}
	if f, ok := values[8].Float(); f != -0.0015 || !ok {
		t.Errorf("ratio: %v, %v", f, ok)
	}
	if b, ok := values[7].Bool(); !b || !ok {
		t.Errorf("t: %v, %v", b, ok)
	}
	if _, ok := values[2].Int(); ok {
		t.Error("nothing has an int")
	}
	if _, ok := values[2].String(nil); ok {
		t.Error("nothing has a string")
	}
	for _, in := range []string{`[]`, ``, `{"auction":1 "last":2}`, `{"auction":01,"last":1}`} {
		if found := json.Lookup([]byte(in), []string{"last"}, values); found != 0 || values[0].Kind != json.Invalid {
			t.Errorf("Lookup(%q) found %d: %+v", in, found, values[0])
		}
	}
	if found := json.Lookup([]byte(`{"a":1,"b":[2],"c":"x"`), []string{"b", "a", "c"}, values); found != 2 || string(values[1].Raw) != "1" || string(values[0].Raw) != "[2]" || values[2].Kind != json.Invalid {
		t.Errorf("truncated: found %d: %+v", found, values[:3])
	}
}

func TestWriter(t *testing.T) {
	var w json.Writer
	for range 2 {
		w.Reset()
		w.BeginObject()
		w.Key("id")
		w.Int(-42)
		w.Key("name")
		w.String("a \"q\" \\ \b\f\n\r\t\x00\x1f\x7f é")
		w.Key("bytes")
		w.StringBytes([]byte("x\xffy"))
		w.Key("tags")
		w.BeginArray()
		w.String("a")
		w.Int(1)
		w.BeginObject()
		w.EndObject()
		w.BeginArray()
		w.EndArray()
		w.Null()
		w.EndArray()
		w.Key("k\"ey")
		w.Float(1.5)
		w.Key("floats")
		w.BeginArray()
		for _, f := range []float64{0.1, 1e21, 1e-7, math.Copysign(0, -1), 123456789, 0.908 * 12345, math.NaN(), math.Inf(-1)} {
			w.Float(f)
		}
		w.EndArray()
		w.Key("ok")
		w.Bool(true)
		w.Key("no")
		w.Bool(false)
		w.Key("raw")
		w.Raw([]byte(`{"x":[1]}`))
		w.EndObject()
		want := `{"id":-42,"name":"a \"q\" \\ \b\f\n\r\t\u0000\u001f` + "\x7f é" + `","bytes":"x` + "\xff" + `y",` +
			`"tags":["a",1,{},[],null],"k\"ey":1.5,"floats":[0.1,1000000000000000000000,0.0000001,-0,123456789,11209.26,null,null],` +
			`"ok":true,"no":false,"raw":{"x":[1]}}`
		if got := string(w.Bytes()); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	var got any
	w.Reset()
	w.BeginObject()
	w.Key("s")
	w.String("\"\\/\b\f\n\r\t\x01€")
	w.EndObject()
	if err := stdjson.Unmarshal(w.Bytes(), &got); err != nil || got.(map[string]any)["s"] != "\"\\/\b\f\n\r\t\x01€" {
		t.Fatalf("encoding/json reads %s as %#v, %v", w.Bytes(), got, err)
	}
	if q := json.AppendQuoted([]byte("x="), []byte("a\nb")); string(q) != `x="a\nb"` {
		t.Fatalf("AppendQuoted = %s", q)
	}
}

// TestAppendFloat checks AppendFloat against strconv on doubles of every
// magnitude and on prices times 0.908.
func TestAppendFloat(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	check := func(f float64) {
		want := strconv.FormatFloat(f, 'f', -1, 64)
		if got := string(json.AppendFloat(nil, f)); got != want {
			t.Fatalf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.5, 1e-7, 5e-324, 1e14, 999999999999999, 1e15, 1e21,
		math.MaxFloat64, 1.0 / 3, -2.5, 123.456, 0.000123, 922912862521546.25, 1e-5, 12345678.9} {
		check(f)
	}
	for range 200000 {
		check(float64(rng.Int63n(1<<uint(rng.Intn(63)))) * 0.908)
		check(float64(rng.Int63n(1_000_000)) / float64(pow10(rng.Intn(12))))
		if f := math.Float64frombits(rng.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			check(f)
		}
	}
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

func TestKindString(t *testing.T) {
	for k, want := range map[json.Kind]string{json.Invalid: "invalid", json.Null: "null", json.Bool: "bool", json.Number: "number",
		json.String: "string", json.Array: "array", json.Object: "object", 9: "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

var bid = []byte(`{"auction":1000,"bidder":2001,"price":12345,"channel":"Google","url":"https://www.nexmark.com/xyz/item.htm?query=1","dateTime":1700000000000,"extra":""}`)

// TestNoAllocs checks that reading fields and building an object allocate
// nothing once the buffers have grown.
func TestNoAllocs(t *testing.T) {
	var w json.Writer
	buf := make([]byte, 0, 64)
	keys := []string{"auction", "price"}
	values := make([]json.Value, 2)
	allocs := testing.AllocsPerRun(100, func() {
		json.Lookup(bid, keys, values)
		price, _ := json.GetInt(bid, "price")
		auction, _ := json.GetInt(bid, "auction")
		f, _ := json.GetFloat(bid, "dateTime")
		buf, _ = json.GetString(buf, bid, "channel")
		w.Reset()
		w.BeginObject()
		w.Key("auction")
		w.Int(auction)
		w.Key("price")
		w.Float(float64(price) * 0.908)
		w.Key("channel")
		w.StringBytes(buf)
		w.Key("t")
		w.Float(f)
		w.EndObject()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per record, want 0", allocs)
	}
}

// FuzzGet checks Get against encoding/json on valid documents: every
// member of a top-level object (in UTF-8, without repeated names), read by its name,
// is the value encoding/json reads, and the typed getters agree with
// encoding/json's decoding. On any input, nothing panics.
func FuzzGet(f *testing.F) {
	f.Add([]byte(doc))
	f.Add(bid)
	f.Add([]byte(`{"a":[1,2,{"b":"\u00e9"}],"c":{"d":null}," e\n":-0.5e10}`))
	f.Add([]byte(`[{"a":1},"x",3]`))
	f.Add([]byte(`{"a":"\ud800\udc00\\"}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"a":"x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		json.Get(data)
		json.Get(data, "a")
		json.Get(data, "a", "0", "b")
		json.GetString(nil, data, "a")
		json.GetFloat(data, "a")
		// Lookup finds exactly what Get finds, key by key, on any input.
		keys := []string{"b", "a", "", "a\u0062", "ab", "c"}
		values := make([]json.Value, len(keys))
		found := json.Lookup(data, keys, values)
		n := 0
		for k, key := range keys {
			raw, kind, ok := json.Get(data, key)
			if ok {
				n++
			}
			if ok != (values[k].Kind != json.Invalid) || !bytes.Equal(raw, values[k].Raw) || kind != values[k].Kind {
				t.Fatalf("Lookup(%q)[%q] = %q, %v; Get: %q, %v, %v", data, key, values[k].Raw, values[k].Kind, raw, kind, ok)
			}
		}
		if found != n {
			t.Fatalf("Lookup(%q) found %d, Get %d", data, found, n)
		}
		if !stdjson.Valid(data) {
			return
		}
		raw, _, ok := json.Get(data)
		if !ok || !bytes.Equal(raw, bytes.TrimSpace(data)) {
			t.Fatalf("Get(%q) = %q, %v", data, raw, ok)
		}
		// encoding/json replaces bytes that are not UTF-8 in names and
		// strings by U+FFFD; Get compares and returns them as they are.
		var members map[string]stdjson.RawMessage
		if !utf8.Valid(data) || stdjson.Unmarshal(data, &members) != nil || members == nil || repeatsNames(data, len(members)) {
			return
		}
		for name, want := range members {
			got, kind, ok := json.Get(data, name)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("Get(%q, %q) = %q, %v; want %q", data, name, got, ok, want)
			}
			var v any
			if err := stdjson.Unmarshal(want, &v); err != nil {
				t.Fatal(err)
			}
			switch v := v.(type) {
			case string:
				s, ok := json.GetString(nil, data, name)
				if kind != json.String || !ok || string(s) != v {
					t.Fatalf("GetString(%q, %q) = %q, %v, kind %v; want %q", data, name, s, ok, kind, v)
				}
			case float64:
				got, ok := json.GetFloat(data, name)
				if kind != json.Number || !ok || got != v {
					t.Fatalf("GetFloat(%q, %q) = %v, %v; want %v", data, name, got, ok, v)
				}
				var n int64
				if err := stdjson.Unmarshal(want, &n); err == nil && !bytes.ContainsAny(want, ".eE") {
					if got, ok := json.GetInt(data, name); !ok || got != n {
						t.Fatalf("GetInt(%q, %q) = %v, %v; want %v", data, name, got, ok, n)
					}
				}
			case bool:
				if got, ok := json.GetBool(data, name); kind != json.Bool || !ok || got != v {
					t.Fatalf("GetBool(%q, %q) = %v, %v", data, name, got, ok)
				}
			case nil:
				if kind != json.Null {
					t.Fatalf("Get(%q, %q) kind %v, want null", data, name, kind)
				}
			case []any:
				if kind != json.Array {
					t.Fatalf("Get(%q, %q) kind %v, want array", data, name, kind)
				}
			case map[string]any:
				if kind != json.Object {
					t.Fatalf("Get(%q, %q) kind %v, want object", data, name, kind)
				}
			}
		}
	})
}

// repeatsNames reports whether the top-level object in data has more
// members than its n distinct names.
func repeatsNames(data []byte, n int) bool {
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return true
	}
	count := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return true
		}
		var skip stdjson.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return true
		}
		count++
	}
	return count != n
}
