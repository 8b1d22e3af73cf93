package main

import "errors"

// Tagged records carry the events of several kinds from a split function to
// a keyed process function of this module: {"k":KEY,"T":PAYLOAD}, where the
// job keys by k (key_by: {field: k}) and the one-letter tag T says what the
// payload is: "p" a person's, "a" an auction's, "b" a bid's. Only this
// module writes and reads them.

// appendTagged appends {"k":key,"<tag>":payload}; key is raw JSON.
func appendTagged(dst, key []byte, tag byte, payload []byte) []byte {
	dst = append(dst, `{"k":`...)
	dst = append(dst, key...)
	dst = append(dst, ',', '"', tag, '"', ':')
	dst = append(dst, payload...)
	return append(dst, '}')
}

var errNotTagged = errors.New(`not a record of a split function: {"k":KEY,"T":PAYLOAD}`)

// untag returns the tag and the payload of a tagged record.
func untag(v []byte) (tag byte, payload []byte, err error) {
	const prefix = `{"k":`
	if len(v) < len(prefix)+7 || string(v[:len(prefix)]) != prefix || v[len(v)-1] != '}' {
		return 0, nil, errNotTagged
	}
	i := len(prefix)
	if v[i] == '"' { // a string key
		for i++; i < len(v) && v[i] != '"'; i++ {
			if v[i] == '\\' {
				i++ // an escape: its next byte is not the end
			}
		}
		i++
	} else {
		for i < len(v) && v[i] != ',' {
			i++
		}
	}
	if i+5 > len(v) || v[i] != ',' || v[i+1] != '"' || v[i+3] != '"' || v[i+4] != ':' {
		return 0, nil, errNotTagged
	}
	return v[i+2], v[i+5 : len(v)-1], nil
}
