package json

import (
	"unicode/utf8"
	"unsafe"
)

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
