// Command enrich is a UDF module that enriches orders with the customer
// tier of the profile an interval join pairs them with. It is one of the
// conformance UDFs: udfs/enrich-rust, -c and -as are the same function in
// other languages and must produce the same bytes. Build it with make.
package main

import (
	"bytes"
	"errors"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.Join("enrich", enrich)
}

// tierField starts the value of a profile's tier.
var tierField = []byte(`"tier":"`)

// errNoTier fails a pair whose profile has no tier.
var errNoTier = errors.New("enrich: profile without tier")

// out is the buffer results are built in; emit copies them.
var out []byte

// enrich emits {"order":<order>,"tier":"<tier>"} for an order (left) and a
// profile (right) of the same user: the order's JSON unchanged and the
// profile's tier, the bytes between "tier":" and the next quote. The
// result keeps the user as key and the later of both timestamps.
func enrich(_ []byte, _ udf.Window, order, profile udf.Record, emit func(udf.Record)) error {
	tier, ok := stringField(profile.Value, tierField)
	if !ok {
		return errNoTier
	}
	out = append(out[:0], `{"order":`...)
	out = append(out, order.Value...)
	out = append(out, `,"tier":"`...)
	out = append(out, tier...)
	out = append(out, `"}`...)
	emit(udf.Record{Value: out})
	return nil
}

// stringField returns the bytes after field up to the next quote.
func stringField(v, field []byte) ([]byte, bool) {
	i := bytes.Index(v, field)
	if i < 0 {
		return nil, false
	}
	v = v[i+len(field):]
	end := bytes.IndexByte(v, '"')
	if end < 0 {
		return nil, false
	}
	return v[:end], true
}

func main() {}
