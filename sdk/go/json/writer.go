package json

import (
	"math"
	"strconv"
)

// A Writer appends a JSON value to Buf: objects and arrays, their keys and
// values. It writes the commas between members and elements itself. It
// allocates only when Buf must grow, so one Writer reset for every record
// allocates nothing once Buf is large enough. The zero Writer is ready to
// use.
//
// A Writer does not check that its calls make a valid value (a key outside
// an object, a missing End): it writes what it is told.
type Writer struct {
	// Buf holds what was written.
	Buf []byte
	// more is true after a value, when the next key or element needs a
	// comma.
	more bool
}

// Reset empties Buf, keeping its memory.
func (w *Writer) Reset() {
	w.Buf = w.Buf[:0]
	w.more = false
}

// Bytes returns what was written.
func (w *Writer) Bytes() []byte { return w.Buf }

func (w *Writer) comma() {
	if w.more {
		w.Buf = append(w.Buf, ',')
	}
}

// BeginObject writes '{'.
func (w *Writer) BeginObject() {
	w.comma()
	w.Buf = append(w.Buf, '{')
	w.more = false
}

// EndObject writes '}'.
func (w *Writer) EndObject() {
	w.Buf = append(w.Buf, '}')
	w.more = true
}

// BeginArray writes '['.
func (w *Writer) BeginArray() {
	w.comma()
	w.Buf = append(w.Buf, '[')
	w.more = false
}

// EndArray writes ']'.
func (w *Writer) EndArray() {
	w.Buf = append(w.Buf, ']')
	w.more = true
}

// Key writes the key of an object's member, escaped, and its colon; the
// member's value comes next.
func (w *Writer) Key(k string) {
	w.comma()
	w.Buf = appendQuoted(w.Buf, k)
	w.Buf = append(w.Buf, ':')
	w.more = false
}

// String writes s as a JSON string, escaped as AppendQuoted does.
func (w *Writer) String(s string) {
	w.comma()
	w.Buf = appendQuoted(w.Buf, s)
	w.more = true
}

// StringBytes writes s as a JSON string, escaped as AppendQuoted does.
func (w *Writer) StringBytes(s []byte) {
	w.comma()
	w.Buf = appendQuoted(w.Buf, s)
	w.more = true
}

// Int writes an integer.
func (w *Writer) Int(v int64) {
	w.comma()
	w.Buf = strconv.AppendInt(w.Buf, v, 10)
	w.more = true
}

// Float writes a number with the fewest digits that read back as v, without
// an exponent (strconv.FormatFloat(v, 'f', -1, 64)); NaN and infinities,
// which JSON cannot write, are null.
func (w *Writer) Float(v float64) {
	w.comma()
	w.Buf = AppendFloat(w.Buf, v)
	w.more = true
}

// Bool writes true or false.
func (w *Writer) Bool(v bool) {
	w.comma()
	if v {
		w.Buf = append(w.Buf, "true"...)
	} else {
		w.Buf = append(w.Buf, "false"...)
	}
	w.more = true
}

// Null writes null.
func (w *Writer) Null() {
	w.comma()
	w.Buf = append(w.Buf, "null"...)
	w.more = true
}

// Raw writes v, a JSON value, as it is: a value that Get returned, for
// example.
func (w *Writer) Raw(v []byte) {
	w.comma()
	w.Buf = append(w.Buf, v...)
	w.more = true
}

// AppendFloat appends v as Writer.Float writes it.
func AppendFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	if m, k, ok := shortDecimal(v); ok {
		// v is m / 10^k: the integer's digits with a point k from the end.
		if m < 0 {
			dst = append(dst, '-')
			m = -m
		}
		var digits [24]byte
		p := len(digits)
		for i := 0; m > 0 || i <= k; i++ {
			if i == k && k > 0 {
				p--
				digits[p] = '.'
			}
			p--
			digits[p] = byte('0' + m%10)
			m /= 10
		}
		return append(dst, digits[p:]...)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// shortDecimal finds v as m / 10^k with at most 15 digits in m and k as
// small as it can be, the case of most numbers a UDF writes, faster than
// strconv, whose shortest formatting costs much in WebAssembly. Every
// decimal of at most 15 significant digits reads back as a double of its
// own (DBL_DIG), so when m / 10^k reads back as v it is the decimal
// strconv would write: the shortest of those that read back as v.
func shortDecimal(v float64) (m int64, k int, ok bool) {
	const limit = 1e15
	if v == 0 || v >= limit || v <= -limit {
		return 0, 0, false
	}
	for k = 0; k < len(pow10); k++ {
		t := v * pow10[k]
		if t >= limit || t <= -limit {
			return 0, 0, false
		}
		m = int64(math.RoundToEven(t))
		if float64(m)/pow10[k] == v {
			return m, k, true
		}
	}
	return 0, 0, false
}

// AppendQuoted appends s as a JSON string: between quotes, with '"' and
// '\\' escaped by a backslash, the control characters \b, \f, \n, \r and
// \t by their short escapes and the other ones below U+0020 as \u00xx
// (lower-case hexadecimal). Every other byte, UTF-8 or not, is written as
// it is.
func AppendQuoted(dst []byte, s []byte) []byte { return appendQuoted(dst, s) }

const hexDigits = "0123456789abcdef"

func appendQuoted[S string | []byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
