package main

import "bytes"

// field returns the raw value of a top-level field of a flat JSON object:
// a string's contents (without unescaping) or the text of a number or
// literal. It does not handle nested objects or escaped quotes, which keeps
// the module small; the click records it reads are flat.
func field(v []byte, name string) ([]byte, bool) {
	key := make([]byte, 0, len(name)+3)
	key = append(append(append(key, '"'), name...), '"')
	i := bytes.Index(v, key)
	if i < 0 {
		return nil, false
	}
	rest := bytes.TrimLeft(v[i+len(key):], " ")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	rest = bytes.TrimLeft(rest[1:], " ")
	if len(rest) > 0 && rest[0] == '"' {
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		return rest[1 : 1+end], true
	}
	end := bytes.IndexAny(rest, ",} ")
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], end > 0
}
