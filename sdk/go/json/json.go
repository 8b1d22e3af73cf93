// Package json reads fields of JSON values and builds JSON values without
// allocating, for UDFs that handle JSON records. It is the Go twin of the
// JSON helpers of the Rust, C and AssemblyScript SDKs, which read and write
// exactly the same bytes.
//
// Get and the typed getters scan the document from its start to the value a
// path names and stop there: they decode nothing they do not return, and
// cost a fraction of encoding/json's Unmarshal, which builds every value of
// the document. Lookup finds several members in one pass. In a Go wasip1
// module, a map that reads five fields of a Nexmark bid and writes a new
// object runs about 6 times faster than with encoding/json
// (docs/PERFORMANCE.md). They check the syntax
// of what they walk through: the objects and arrays on the path up to the
// value, the keys, the value they return and the comma or bracket after it;
// a value they skip over is only checked to be a string, number or literal
// that ends, or an object or array whose brackets balance, and what follows
// the value's comma is not read at all.
// Malformed input makes them return ok == false; they never panic.
//
// A Writer appends JSON to a byte slice it reuses from record to record:
// objects, arrays, keys and values, with strings escaped.
package json

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values; Invalid is the zero Kind, what the getters
// return when ok is false.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"invalid", "null", "bool", "number", "string", "array", "object"}

// String is the kind's name in lower case: "number", "string", and so on.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Get returns the raw bytes of the value at path in data, a sub-slice of
// data (a string with its quotes and escapes, as it is written), and its
// kind. Each element of path is the key of a member of an object or, where
// the value is an array, the decimal index of an element ("0" is the first).
// With no path, it is data's value itself. A key is compared with the
// member's name after unescaping; of several members with that name, the
// first counts. ok is false when a key or index is missing, when a value on
// the path is not an object or array, and when the input is malformed.
func Get(data []byte, path ...string) (value []byte, kind Kind, ok bool) {
	i, closer, ok := find(data, path)
	if !ok {
		return nil, Invalid, false
	}
	end, kind := valueEnd(data, i)
	if kind == Invalid {
		return nil, Invalid, false
	}
	// The value must end where the next member or element, the end of its
	// object or array or the end of the document comes.
	next := skipSpace(data, end)
	if closer == 0 && next != len(data) || closer != 0 && (next == len(data) || data[next] != ',' && data[next] != closer) {
		return nil, Invalid, false
	}
	return data[i:end], kind, true
}

// GetInt returns the number at path as an int64. ok is false when there is
// no value at path, when it is not a number, and when the number has a
// fraction or an exponent or does not fit an int64.
func GetInt(data []byte, path ...string) (int64, bool) {
	v, kind, ok := Get(data, path...)
	if !ok || kind != Number {
		return 0, false
	}
	return ParseInt(v)
}

// GetFloat returns the number at path as the float64 nearest to it. ok is
// false when there is no value at path, when it is not a number, and when
// it is out of the range of a float64.
func GetFloat(data []byte, path ...string) (float64, bool) {
	v, kind, ok := Get(data, path...)
	if !ok || kind != Number {
		return 0, false
	}
	return ParseFloat(v)
}

// GetBool returns the boolean at path. ok is false when there is no value at
// path or it is not true or false.
func GetBool(data []byte, path ...string) (b, ok bool) {
	v, kind, ok := Get(data, path...)
	if !ok || kind != Bool {
		return false, false
	}
	return v[0] == 't', true
}

// GetString returns the string at path, unescaped into buf: buf[:0] with
// the string appended (buf grows when it is too short; pass the result back
// in for the next record to allocate nothing once it is large enough). ok is
// false when there is no value at path, when it is not a string, and when
// it has an invalid escape. Bytes that are not valid UTF-8 are returned as
// they are; an escaped lone UTF-16 surrogate becomes U+FFFD, as
// encoding/json decodes it.
func GetString(buf, data []byte, path ...string) ([]byte, bool) {
	v, kind, ok := Get(data, path...)
	if !ok || kind != String {
		return buf[:0], false
	}
	return AppendUnescaped(buf[:0], v[1:len(v)-1])
}

// AppendUnescaped appends the string whose contents, between its quotes,
// are raw to dst, with its escapes decoded. ok is false when raw has an
// invalid escape or an unescaped quote or control character; dst then holds
// what was decoded before it.
func AppendUnescaped(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < 0x20 || c == '"' {
				return dst, false
			}
			start := i
			for i < len(raw) && raw[i] != '\\' && raw[i] >= 0x20 && raw[i] != '"' {
				i++
			}
			dst = append(dst, raw[start:i]...)
			continue
		}
		r, n := unescape(raw, i)
		if n == 0 {
			return dst, false
		}
		if r < utf8.RuneSelf {
			dst = append(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		i += n
	}
	return dst, true
}

// unescape decodes the escape at raw[i] (a backslash): the rune and the
// bytes it takes, 0 when it is invalid. A \u escape of a UTF-16 surrogate
// pair is one rune; a lone surrogate is U+FFFD.
func unescape(raw []byte, i int) (rune, int) {
	if i+1 >= len(raw) {
		return 0, 0
	}
	switch raw[i+1] {
	case '"', '\\', '/':
		return rune(raw[i+1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(raw, i+2)
		if r < 0 {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if r < 0xdc00 && i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
			if lo := hex4(raw, i+8); lo >= 0xdc00 && lo < 0xe000 {
				return utf16.DecodeRune(r, lo), 12
			}
		}
		return utf8.RuneError, 6
	}
	return 0, 0
}

// hex4 is the value of the 4 hexadecimal digits at raw[i:], -1 when they are
// not.
func hex4(raw []byte, i int) rune {
	if i+4 > len(raw) {
		return -1
	}
	var r rune
	for _, c := range raw[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// ParseInt reads a JSON number with neither fraction nor exponent as an
// int64. ok is false when v is not such a number or out of range.
func ParseInt(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' || n > (math.MaxUint64-9)/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ParseFloat reads a JSON number as the float64 nearest to it. ok is false
// when v is not a JSON number or out of a float64's range.
func ParseFloat(v []byte) (float64, bool) {
	if numberEnd(v, 0) != len(v) {
		return 0, false
	}
	// Exact when the digits fit 2^53 and the power of ten is exact: one
	// correctly rounded multiplication or division (Clinger's fast path).
	i, neg := 0, v[0] == '-'
	if neg {
		i++
	}
	var mant uint64
	exp, digits := 0, 0
	for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		if mant != 0 || v[i] != '0' {
			digits++
		}
		mant = mant*10 + uint64(v[i]-'0')
	}
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			if mant != 0 || v[i] != '0' {
				digits++
			}
			mant = mant*10 + uint64(v[i]-'0')
			exp--
		}
	}
	if i < len(v) {
		e, eneg := 0, false
		i++
		if v[i] == '+' || v[i] == '-' {
			eneg = v[i] == '-'
			i++
		}
		for ; i < len(v) && e < 10000; i++ {
			e = e*10 + int(v[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if digits <= 15 && mant < 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// find returns the offset of the value at path in data and the byte that
// closes the object or array it is in, 0 for the document's value.
func find(data []byte, path []string) (int, byte, bool) {
	i := skipSpace(data, 0)
	var closer byte
	for _, key := range path {
		if i >= len(data) {
			return 0, 0, false
		}
		var ok bool
		switch data[i] {
		case '{':
			i, ok = member(data, i, key)
			closer = '}'
		case '[':
			i, ok = element(data, i, key)
			closer = ']'
		}
		if !ok {
			return 0, 0, false
		}
	}
	return i, closer, true
}

// member returns the offset of the value of the first member named key of
// the object at data[i].
func member(data []byte, i int, key string) (int, bool) {
	n := len(data)
	i = skipSpace(data, i+1)
	for i < n && data[i] == '"' {
		start, end, escaped := name(data, i)
		if end < 0 {
			return 0, false
		}
		match := false
		if escaped {
			match = escapedEqual(data[start:end], key)
		} else {
			match = string(data[start:end]) == key
		}
		i = skipSpace(data, end+1)
		if i >= n || data[i] != ':' {
			return 0, false
		}
		i = skipSpace(data, i+1)
		if match {
			return i, true
		}
		if i = skipValue(data, i); i < 0 {
			return 0, false
		}
		i = skipSpace(data, i)
		if i >= n || data[i] != ',' {
			return 0, false
		}
		i = skipSpace(data, i+1)
	}
	return 0, false
}

// name returns the offsets of the contents of the string at data[i], a
// member's name, and whether it has escapes; end is -1 when it is
// malformed. It and skipValue scan strings and integers themselves, as
// function calls cost much in WebAssembly.
func name(data []byte, i int) (start, end int, escaped bool) {
	n := len(data)
	j := i + 1
scan:
	for {
		for j+8 <= n && !special(*(*uint64)(unsafe.Pointer(&data[j]))) {
			j += 8
		}
		for ; j < n; j++ {
			switch c := data[j]; {
			case c == '"':
				return i + 1, j, escaped
			case c == '\\':
				escaped = true
				j += 2
				continue scan
			case c < 0x20:
				return 0, -1, false
			}
		}
		return 0, -1, false
	}
}

// skipValue returns the offset after the value at data[i], -1 when it is
// malformed.
func skipValue(data []byte, i int) int {
	n := len(data)
	if i >= n {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		j := i + 1
	str:
		for {
			for j+8 <= n && !special(*(*uint64)(unsafe.Pointer(&data[j]))) {
				j += 8
			}
			for ; j < n; j++ {
				switch c := data[j]; {
				case c == '"':
					return j + 1
				case c == '\\':
					j += 2
					continue str
				case c < 0x20:
					return -1
				}
			}
			return -1
		}
	case c >= '1' && c <= '9' || c == '-' && i+1 < n && data[i+1] >= '1' && data[i+1] <= '9':
		// An integer, unless a fraction or an exponent follows.
		j := i + 1
		for j < n && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		if j < n && (data[j] == '.' || data[j] == 'e' || data[j] == 'E') {
			return numberEnd(data, i)
		}
		return j
	}
	end, kind := valueEnd(data, i)
	if kind == Invalid {
		return -1
	}
	return end
}

// A Value is a value Lookup found: its raw bytes, as Get returns them, and
// its kind; the zero Value (kind Invalid) where it found none.
type Value struct {
	Raw  []byte
	Kind Kind
}

// Lookup finds the values of several members of the object data in one
// pass, the first member of each name: values[k] is the value of the
// member named keys[k], or the zero Value. It stops as soon as it has
// found them all, or at malformed input, and returns how many it found.
// Each value it finds is exactly what Get(data, keys[k]) returns: Lookup
// makes the same checks on the way, in one scan instead of one per key.
// values must be at least as long as keys.
func Lookup(data []byte, keys []string, values []Value) int {
	values = values[:len(keys)]
	clear(values)
	found := 0
	n := len(data)
	i := skipSpace(data, 0)
	if i >= n || data[i] != '{' || len(keys) == 0 {
		return 0
	}
	i = skipSpace(data, i+1)
	for i < n && data[i] == '"' {
		start, end, escaped := name(data, i)
		if end < 0 {
			return found
		}
		match := -1
		for k, key := range keys {
			if values[k].Kind != Invalid {
				continue
			}
			if escaped && escapedEqual(data[start:end], key) || !escaped && string(data[start:end]) == key {
				match = k
				break
			}
		}
		i = skipSpace(data, end+1)
		if i >= n || data[i] != ':' {
			return found
		}
		i = skipSpace(data, i+1)
		v := i
		if i = skipValue(data, i); i < 0 {
			return found
		}
		raw := data[v:i]
		i = skipSpace(data, i)
		if i >= n || data[i] != ',' && data[i] != '}' {
			return found
		}
		if match >= 0 {
			_, kind := valueEnd(raw, 0)
			values[match] = Value{raw, kind}
			if found++; found == len(keys) {
				return found
			}
		}
		if data[i] == '}' {
			return found
		}
		i = skipSpace(data, i+1)
	}
	return found
}

// Int returns the value as GetInt does.
func (v Value) Int() (int64, bool) {
	if v.Kind != Number {
		return 0, false
	}
	return ParseInt(v.Raw)
}

// Float returns the value as GetFloat does.
func (v Value) Float() (float64, bool) {
	if v.Kind != Number {
		return 0, false
	}
	return ParseFloat(v.Raw)
}

// Bool returns the value as GetBool does.
func (v Value) Bool() (b, ok bool) {
	if v.Kind != Bool {
		return false, false
	}
	return v.Raw[0] == 't', true
}

// String returns the value as GetString does: unescaped into buf[:0].
func (v Value) String(buf []byte) ([]byte, bool) {
	if v.Kind != String {
		return buf[:0], false
	}
	return AppendUnescaped(buf[:0], v.Raw[1:len(v.Raw)-1])
}

// element returns the offset of element index (decimal) of the array at
// data[i].
func element(data []byte, i int, index string) (int, bool) {
	n, ok := parseIndex(index)
	if !ok {
		return 0, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return 0, false
	}
	for ; ; n-- {
		if n == 0 {
			return i, i < len(data)
		}
		end, kind := valueEnd(data, i)
		if kind == Invalid {
			return 0, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return 0, false
		}
		i = skipSpace(data, i+1)
	}
}

// parseIndex reads a decimal array index: digits, without a sign or
// leading zeros.
func parseIndex(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// escapedEqual reports whether the string contents name, which has
// escapes, unescape to key.
func escapedEqual(name []byte, key string) bool {
	k := 0
	var b [utf8.UTFMax]byte
	for i := 0; i < len(name); {
		if name[i] != '\\' {
			if k >= len(key) || key[k] != name[i] {
				return false
			}
			i++
			k++
			continue
		}
		r, n := unescape(name, i)
		if n == 0 {
			return false
		}
		w := utf8.EncodeRune(b[:], r)
		if k+w > len(key) || key[k:k+w] != string(b[:w]) {
			return false
		}
		i += n
		k += w
	}
	return k == len(key)
}

// skipSpace returns the offset of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the offset after the closing quote of the string at
// data[i] and whether it has escapes; -1 when it does not end or holds a
// control character. It skips eight bytes at a time where none of them
// is a quote, a backslash or a control character.
func stringEnd(data []byte, i int) (int, bool) {
	escaped := false
	i++
words:
	for {
		for i+8 <= len(data) && !special(*(*uint64)(unsafe.Pointer(&data[i]))) {
			i += 8
		}
		for ; i < len(data); i++ {
			switch c := data[i]; {
			case c == '"':
				return i + 1, escaped
			case c == '\\':
				escaped = true
				i += 2
				continue words
			case c < 0x20:
				return -1, false
			}
		}
		return -1, false
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether one of the eight bytes of x is a quote, a
// backslash or below 0x20 (it may also report a byte after one that is).
func special(x uint64) bool {
	q, b := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x|(q-ones)&^q|(b-ones)&^b)&highs != 0
}

// numberEnd returns the offset after the JSON number at data[i], -1 when
// it is not one.
func numberEnd(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digitsEnd(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := digitsEnd(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digitsEnd(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digitsEnd(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// valueEnd returns the offset after the value at data[i] and its kind,
// Invalid when it is malformed. An object or array is only checked to be
// balanced, with its strings ending.
func valueEnd(data []byte, i int) (int, Kind) {
	if i >= len(data) {
		return 0, Invalid
	}
	switch c := data[i]; c {
	case '"':
		end, _ := stringEnd(data, i)
		if end < 0 {
			return 0, Invalid
		}
		return end, String
	case '{', '[':
		end := containerEnd(data, i)
		if end < 0 {
			return 0, Invalid
		}
		if c == '{' {
			return end, Object
		}
		return end, Array
	case 't':
		return literalEnd(data, i, "true", Bool)
	case 'f':
		return literalEnd(data, i, "false", Bool)
	case 'n':
		return literalEnd(data, i, "null", Null)
	}
	end := numberEnd(data, i)
	if end < 0 {
		return 0, Invalid
	}
	return end, Number
}

func literalEnd(data []byte, i int, lit string, kind Kind) (int, Kind) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, Invalid
	}
	return i + len(lit), kind
}

// containerEnd returns the offset after the object or array at data[i],
// whose brackets and braces must balance, -1 when they do not.
func containerEnd(data []byte, i int) int {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			end, _ := stringEnd(data, i)
			if end < 0 {
				return -1
			}
			i = end - 1
		}
	}
	return -1
}
