package operator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
)

// errNoField reports a JSON value without the requested top-level field.
var errNoField = errors.New("field not found")

// JSONField finds the top-level field name in the JSON object data without
// decoding the rest, and returns its value: a string's unescaped contents
// (appended to scratch when it has escapes, else a view of data), or the raw
// text of any other value. It is how the host reads key_by.field and
// timestamp.field without a UDF, so it never allocates for plain strings and
// numbers.
func JSONField(data []byte, name string, scratch []byte) (value []byte, isString bool, err error) {
	s := jsonScanner{data: data}
	if err := s.member(name, scratch); err != nil {
		return nil, false, err
	}
	if s.peek() == '"' {
		raw, esc, err := s.stringRaw()
		if err != nil {
			return nil, false, err
		}
		if !esc {
			return raw, true, nil
		}
		v, err := unescape(raw, scratch[:0])
		return v, true, err
	}
	start := s.pos
	if err := s.skipValue(0); err != nil {
		return nil, false, err
	}
	return data[start:s.pos], false, nil
}

// JSONMember finds the top-level field name in the JSON object data as
// JSONField does and returns its value as written, a view of data: an
// object, array, number, literal, or a string with its quotes and escapes.
func JSONMember(data []byte, name string, scratch []byte) ([]byte, error) {
	s := jsonScanner{data: data}
	if err := s.member(name, scratch); err != nil {
		return nil, err
	}
	start := s.pos
	if err := s.skipValue(0); err != nil {
		return nil, err
	}
	return data[start:s.pos], nil
}

// member moves the scanner, at the start of a JSON object, to the value of
// its top-level field name (scratch unescapes keys with escapes). The
// object's members after it are not checked.
func (s *jsonScanner) member(name string, scratch []byte) error {
	if value, found, ok := memberCompact(s.data, s.pos, name); ok {
		if !found {
			return errNoField
		}
		s.pos = value
		return nil
	}
	return s.memberFull(name, scratch)
}

// memberFull is member for any JSON: whitespace, escaped keys, and the
// errors.
func (s *jsonScanner) memberFull(name string, scratch []byte) error {
	s.space()
	if !s.consume('{') {
		return s.fail("want a JSON object")
	}
	s.space()
	if s.consume('}') {
		return errNoField
	}
	for {
		s.space()
		key, escaped, err := s.stringRaw()
		if err != nil {
			return err
		}
		s.space()
		if !s.consume(':') {
			return s.fail("want ':'")
		}
		s.space()
		match := !escaped && string(key) == name
		if escaped && !match {
			unq, uerr := unescape(key, scratch[:0])
			if uerr != nil {
				return uerr
			}
			match = string(unq) == name
		}
		if match {
			return nil
		}
		if err := s.skipValue(0); err != nil {
			return err
		}
		s.space()
		if s.consume(',') {
			continue
		}
		if s.consume('}') {
			return errNoField
		}
		return s.fail("want ',' or '}'")
	}
}

const maxJSONDepth = 512

type jsonScanner struct {
	data []byte
	pos  int
}

func (s *jsonScanner) fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.pos, msg)
}

func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jsonScanner) consume(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c > ' ' {
			return // compact JSON's case, settled in one comparison
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		s.pos++
	}
}

// stringRaw reads a string and returns its raw contents between the quotes.
func (s *jsonScanner) stringRaw() (raw []byte, escaped bool, err error) {
	if !s.consume('"') {
		return nil, false, s.fail("want a string")
	}
	start := s.pos
	for s.pos < len(s.data) {
		s.pos = plainUntil(s.data, s.pos)
		if s.pos >= len(s.data) {
			break
		}
		switch c := s.data[s.pos]; {
		case c == '"':
			raw = s.data[start:s.pos]
			s.pos++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			s.pos += 2
		case c < 0x20:
			return nil, false, s.fail("control character in string")
		default:
			s.pos++
		}
	}
	return nil, false, s.fail("unterminated string")
}

// Eight bytes at a time: ones has 0x01 in each byte, highs 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainUntil returns the index of the first byte of data from i on that may
// end a run of plain string bytes (a quote, a backslash or a control
// character), looking at eight bytes at a time; len(data) or the start of
// its last few bytes when there is none in whole words.
func plainUntil(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		q := x ^ ('"' * ones)
		b := x ^ ('\\' * ones)
		// A byte is flagged when it is zero in q or b, or below 0x20 in x;
		// the lowest flag is exact (a borrow only flags bytes above it).
		special := (q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x
		if special &= highs; special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
	}
	return i
}

// digitsUntil returns the index of the first byte of data from i on that
// is not a decimal digit, looking at eight bytes at a time; the start of
// the last few bytes when all whole words are digits.
func digitsUntil(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// A byte is flagged when it is below '0' or, with 0x46 added (no
		// carry out of a byte below 0x80), above '9'; bytes of 0x80 and
		// over are flagged by their own high bit.
		notDigit := ((x - '0'*ones) | (x + 0x46*ones) | x) & highs
		if notDigit != 0 {
			return i + bits.TrailingZeros64(notDigit)/8
		}
	}
	return i
}

func (s *jsonScanner) skipValue(depth int) error {
	if depth > maxJSONDepth {
		return s.fail("nested too deeply")
	}
	s.space()
	// A value the compact skip refuses is scanned again below; trying it at
	// the top only keeps that to twice the bytes at worst.
	if depth == 0 {
		if end, ok := skipCompact(s.data, s.pos); ok {
			s.pos = end
			return nil
		}
	}
	switch c := s.peek(); {
	case c == '"':
		_, _, err := s.stringRaw()
		return err
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.pos++
		s.space()
		if s.consume(closing) {
			return nil
		}
		for {
			if c == '{' {
				s.space()
				if _, _, err := s.stringRaw(); err != nil {
					return err
				}
				s.space()
				if !s.consume(':') {
					return s.fail("want ':'")
				}
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.consume(',') {
				continue
			}
			if s.consume(closing) {
				return nil
			}
			return s.fail("want ',' or a closing bracket")
		}
	case c == '-' || (c >= '0' && c <= '9'):
		s.pos = digitsUntil(s.data, s.pos+1)
		for s.pos < len(s.data) && isNumberByte(s.data[s.pos]) {
			s.pos++
		}
		return nil
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
				s.pos += len(lit)
				return nil
			}
		}
		return s.fail("want a JSON value")
	}
}

// unescape decodes the escapes of a JSON string's raw contents into dst.
func unescape(raw, dst []byte) ([]byte, error) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(raw) {
			return nil, errors.New("invalid JSON string escape")
		}
		switch raw[i] {
		case '"', '\\', '/':
			dst = append(dst, raw[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n, err := hexRune(raw[i+1:])
			if err != nil {
				return nil, err
			}
			i += n
			dst = utf8.AppendRune(dst, r)
		default:
			return nil, fmt.Errorf("invalid JSON string escape \\%c", raw[i])
		}
	}
	return dst, nil
}

// hexRune decodes the 4 hex digits after \u, and a following low surrogate
// escape when the first is a high surrogate. n is the bytes consumed.
func hexRune(b []byte) (r rune, n int, err error) {
	one := func(b []byte) (rune, error) {
		if len(b) < 4 {
			return 0, errors.New("short \\u escape")
		}
		v, err := strconv.ParseUint(string(b[:4]), 16, 16)
		if err != nil {
			return 0, errors.New("invalid \\u escape")
		}
		return rune(v), nil
	}
	r, err = one(b)
	if err != nil {
		return 0, 0, err
	}
	if r >= 0xD800 && r < 0xDC00 && len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
		lo, err := one(b[6:])
		if err == nil && lo >= 0xDC00 && lo < 0xE000 {
			return (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 10, nil
		}
	}
	if r >= 0xD800 && r < 0xE000 {
		r = utf8.RuneError
	}
	return r, 4, nil
}

// ParseTimestamp reads an event time in milliseconds from a JSON field value:
// an integer number of milliseconds, or an RFC 3339 string. Integers are read
// exactly over the whole int64 range; one outside it is an error. A number
// with a fraction is truncated toward zero, its integer part read exactly; a
// number with an exponent is read as a float64 and truncated.
func ParseTimestamp(v []byte, isString bool) (int64, error) {
	if isString {
		t, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil {
			return 0, fmt.Errorf("timestamp %q: want milliseconds or RFC 3339", v)
		}
		return t.UnixMilli(), nil
	}
	if n, ok := ParseInt(v); ok {
		return n, nil
	}
	if whole, ok := decimalInt(v); ok {
		if n, ok := ParseInt(whole); ok {
			return n, nil
		}
		return 0, errTimestampRange(v)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != f {
		return 0, fmt.Errorf("timestamp %s: want milliseconds or RFC 3339", v)
	}
	// -2^63 is an int64, 2^63 is not; both are float64s.
	if f < -(1<<63) || f >= 1<<63 {
		return 0, errTimestampRange(v)
	}
	return int64(f), nil
}

func errTimestampRange(v []byte) error {
	return fmt.Errorf("timestamp %s: out of range: milliseconds must be from %d to %d", v, int64(math.MinInt64), int64(math.MaxInt64))
}

// decimalInt returns the integer part of a number written -?digits or
// -?digits.digits (at least one digit on each side of the point), which is
// then the number truncated toward zero; ok is false for anything else.
func decimalInt(b []byte) (whole []byte, ok bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i = 1
	}
	digits := i
	for digits < len(b) && b[digits] >= '0' && b[digits] <= '9' {
		digits++
	}
	if digits == i {
		return nil, false
	}
	if digits == len(b) {
		return b, true
	}
	if b[digits] != '.' || digits+1 == len(b) {
		return nil, false
	}
	for _, c := range b[digits+1:] {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	if i == 1 && allZero(b[1:digits]) {
		// -0.5 truncates to 0.
		return b[1:digits], true
	}
	return b[:digits], true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// ParseInt parses a decimal integer (an optional '-' and digits) in the
// int64 range without allocating; ok is false for anything else, including
// a value out of the range.
func ParseInt(b []byte) (n int64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	// limit is the magnitude of the range's end on this side.
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (limit-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		return int64(-u), true
	}
	return int64(u), true
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
