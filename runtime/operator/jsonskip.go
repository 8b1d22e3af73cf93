package operator

// skipCompact returns the end of the JSON value that starts at data[i] when
// it is compact (no whitespace between its tokens) and nested at most
// maxCompactDepth deep, in one loop without the scanner's calls per token.
// Where it returns ok, skipValue accepts the same value and ends at the
// same byte (FuzzSkipCompact); anything else, valid or not, it leaves to
// skipValue, which also words the error.
func skipCompact(data []byte, i int) (end int, ok bool) {
	// arrays has bit d set when the container at depth d is an array.
	var arrays uint64
	depth := 0
	for {
		// A value starts at i.
		if i >= len(data) {
			return 0, false
		}
		switch c := data[i]; {
		case c == '"':
			if i, ok = stringEnd(data, i+1, true); !ok {
				return 0, false
			}
			i++
		case c == '-' || c >= '0' && c <= '9':
			i = digitsUntil(data, i+1)
			for i < len(data) && isNumberByte(data[i]) {
				i++
			}
		case c == '{' || c == '[':
			if depth == maxCompactDepth {
				return 0, false
			}
			i++
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				i++
				break
			}
			if c == '[' {
				arrays |= 1 << depth
				depth++
				continue
			}
			arrays &^= 1 << depth
			depth++
			end, ok := objectKey(data, i, true)
			if !ok {
				return 0, false
			}
			i = end + 2
			continue
		case c == 't' && hasPrefixAt(data, i, "true"), c == 'n' && hasPrefixAt(data, i, "null"):
			i += 4
		case c == 'f' && hasPrefixAt(data, i, "false"):
			i += 5
		default:
			return 0, false
		}
		// A value ended at i: close the containers it ends, then go on
		// after a comma.
		for {
			if depth == 0 {
				return i, true
			}
			if i >= len(data) {
				return 0, false
			}
			inArray := arrays>>(depth-1)&1 == 1
			c := data[i]
			if c == ',' {
				i++
				if !inArray {
					end, ok := objectKey(data, i, true)
					if !ok {
						return 0, false
					}
					i = end + 2
				}
				break
			}
			if inArray && c == ']' || !inArray && c == '}' {
				i++
				depth--
				continue
			}
			return 0, false
		}
	}
}

// maxCompactDepth is the deepest nesting skipCompact follows, one bit of
// its stack each.
const maxCompactDepth = 64

// objectKey reads the key at data[i] and the colon after it, and returns
// the index of the key's closing quote: its contents are data[i+1:end], its
// value starts at end+2. With escapes false, a key with escapes fails, as
// stringEnd says.
func objectKey(data []byte, i int, escapes bool) (end int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	end, ok = stringEnd(data, i+1, escapes)
	if !ok || end+1 >= len(data) || data[end+1] != ':' {
		return 0, false
	}
	return end, true
}

// stringEnd returns the index of the closing quote of the string whose
// contents start at data[i], read as stringRaw reads it: a backslash escapes
// the next byte, a control character fails the string. With escapes false
// a backslash fails it too: a key with escapes may unescape to the name
// sought.
func stringEnd(data []byte, i int, escapes bool) (int, bool) {
	for {
		i = plainUntil(data, i)
		if i >= len(data) {
			return 0, false
		}
		switch c := data[i]; {
		case c == '"':
			return i, true
		case c == '\\' && escapes:
			i += 2
		case c == '\\' || c < 0x20:
			return 0, false
		default:
			i++
		}
	}
}

// hasPrefixAt reports whether data has lit at i.
func hasPrefixAt(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// memberCompact finds the top-level member name of the compact JSON object
// at data[i] as the scanner's member does: found with the index of its
// value, or not found. ok is false where the object is not compact up to
// the member, or a key before it has escapes, or it is invalid: the caller
// then scans it with the full scanner.
func memberCompact(data []byte, i int, name string) (value int, found, ok bool) {
	if i >= len(data) || data[i] != '{' {
		return 0, false, false
	}
	i++
	if i < len(data) && data[i] == '}' {
		return 0, false, true
	}
	for {
		end, ok := objectKey(data, i, false)
		if !ok {
			return 0, false, false
		}
		key := data[i+1 : end]
		i = end + 2
		if string(key) == name {
			return i, true, true
		}
		if i, ok = skipCompact(data, i); !ok || i >= len(data) {
			return 0, false, false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return 0, false, true
		default:
			return 0, false, false
		}
	}
}
