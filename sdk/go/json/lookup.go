package json

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
