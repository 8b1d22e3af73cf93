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
