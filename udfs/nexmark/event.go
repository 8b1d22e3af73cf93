package main

import (
	"errors"
	"fmt"
	"strconv"

	"wasmstream.io/platform/sdk/go/json"
)

// The event types of a Nexmark event's event_type.
const (
	kindPerson  = 0
	kindAuction = 1
	kindBid     = 2
)

// members are the names of the event's members of each type.
var members = [...]string{"person", "auction", "bid"}

// eventType reads a Nexmark event's event_type: at once when the event
// starts with it, as the generator writes events, else by a scan.
func eventType(v []byte) (int, error) {
	const prefix = `{"event_type":`
	if len(v) > len(prefix)+1 && string(v[:len(prefix)]) == prefix && v[len(prefix)+1] == ',' {
		if c := v[len(prefix)]; c >= '0' && c <= '2' {
			return int(c - '0'), nil
		}
	}
	n, ok := json.GetInt(v, "event_type")
	if !ok || n < kindPerson || n > kindBid {
		return 0, errors.New("not a Nexmark event: no event_type 0, 1 or 2")
	}
	return int(n), nil
}

// member returns the object of a Nexmark event of type kind, or ok false
// for an event of another type.
func member(v []byte, kind int) (obj []byte, ok bool, err error) {
	t, err := eventType(v)
	if err != nil || t != kind {
		return nil, false, err
	}
	obj, k, found := json.Get(v, members[kind])
	if !found || k != json.Object {
		return nil, false, fmt.Errorf("an event of event_type %d without a %s object", kind, members[kind])
	}
	return obj, true, nil
}

// fields finds members of an object in one pass: the integers and strings
// a function reads. A name ending in '#' is an integer member, the others
// are strings; each must be there, with its kind.
type fields struct {
	what    string // what the object is, for errors
	keys    []string
	integer []bool
	values  []json.Value
	ints    []int64
}

func newFields(what string, names ...string) *fields {
	f := &fields{what: what, keys: make([]string, len(names)), integer: make([]bool, len(names)),
		values: make([]json.Value, len(names)), ints: make([]int64, len(names))}
	for i, n := range names {
		f.keys[i] = n
		if n[len(n)-1] == '#' {
			f.keys[i], f.integer[i] = n[:len(n)-1], true
		}
	}
	return f
}

// of looks the members up in obj.
func (f *fields) of(obj []byte) error {
	json.Lookup(obj, f.keys, f.values)
	for i, v := range f.values {
		ok := v.Kind == json.String
		if f.integer[i] {
			f.ints[i], ok = v.Int()
		}
		if !ok {
			kind := "a string"
			if f.integer[i] {
				kind = "an integer"
			}
			return fmt.Errorf("%s without %s %s", f.what, kind, f.keys[i])
		}
	}
	return nil
}

// raw is the raw bytes of member i, as found (a string with its quotes).
func (f *fields) raw(i int) []byte { return f.values[i].Raw }

// str is the unescaped string of member i, appended to buf[:0].
func (f *fields) str(i int, buf []byte) []byte {
	s, _ := f.values[i].String(buf[:0])
	return s
}

// appendDecimal3 appends thousandths as a decimal number with three
// digits after the point: 454000 is 454.000.
func appendDecimal3(dst []byte, thousandths int64) []byte {
	u := uint64(thousandths)
	if thousandths < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = strconv.AppendUint(dst, u/1000, 10)
	f := u % 1000
	return append(dst, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// Dates of event times in UTC, for DATE_FORMAT(dateTime, 'yyyy-MM-dd') and
// 'HH:mm'.
const (
	msPerMinute = 60_000
	msPerHour   = 60 * msPerMinute
	msPerDay    = 24 * msPerHour
)

// floorDiv is a/b rounded down; b is positive.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// appendDay appends the UTC date of ms as yyyy-MM-dd (the proleptic
// Gregorian calendar, from days since the epoch).
func appendDay(dst []byte, ms int64) []byte {
	z := floorDiv(ms, msPerDay) + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	for p := int64(1000); y >= 0 && p > y && p > 1; p /= 10 {
		dst = append(dst, '0') // four digits at least
	}
	dst = strconv.AppendInt(dst, y, 10)
	return append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// floorMod is a mod b in [0, b); b is positive.
func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// hourOf is the UTC hour of ms.
func hourOf(ms int64) int64 { return floorMod(floorDiv(ms, msPerHour), 24) }

// appendMinute appends the UTC hour and minute of ms as HH:mm.
func appendMinute(dst []byte, ms int64) []byte {
	h, m := hourOf(ms), floorMod(floorDiv(ms, msPerMinute), 60)
	return append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
}
