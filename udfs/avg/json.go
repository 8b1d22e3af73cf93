package main

import (
	"bytes"
	"errors"
	"math"
	"strconv"
)

var amountField = []byte(`"amount":`)

// amount reads the number after "amount": in a flat JSON object (the
// records of the platform's clicks generator and of this module's README
// are such objects). It does not handle nesting or whitespace before the
// colon, which keeps the module small and fast.
func amount(v []byte) (float64, error) {
	i := bytes.Index(v, amountField)
	if i < 0 {
		return 0, errors.New(`no "amount" field`)
	}
	rest := bytes.TrimLeft(v[i+len(amountField):], " ")
	end := 0
	for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || rest[end] == '-' || rest[end] == '.' || rest[end] == 'e' || rest[end] == 'E' || rest[end] == '+') {
		end++
	}
	if end == 0 {
		return 0, errors.New(`"amount" is not a number`)
	}
	n, neg, whole := int64(0), rest[0] == '-', true
	digits := rest[:end]
	if neg {
		digits = digits[1:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' || n > math.MaxInt64/10-9 {
			whole = false
			break
		}
		n = n*10 + int64(c-'0')
	}
	if whole && len(digits) > 0 {
		if neg {
			n = -n
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(string(rest[:end]), 64)
	if err != nil {
		return 0, errors.New(`"amount" is not a number`)
	}
	return f, nil
}

// appendJSONString appends s as a JSON string, escaping quotes, backslashes
// and control characters; other bytes pass as they are.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
