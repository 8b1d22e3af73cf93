// Command lookup is a UDF module for async lookups: it enriches orders
// with the profile of their user, read from the NATS KV bucket "users" or
// over HTTP, without waiting for one lookup before asking for the next.
// Build it with make.
package main

import (
	"bytes"
	"errors"

	udf "wasmstream.io/platform/sdk/go"
)

func init() {
	udf.AsyncRequest("ask_kv", askKV)
	udf.AsyncRequest("ask_http", askHTTP)
	udf.AsyncResult("join", join)
}

var (
	userField = []byte(`"user":"`)
	urlField  = []byte(`"url":"`)
	errNoUser = errors.New("lookup: order without user")
	errNoURL  = errors.New("lookup: order without url")
)

// askKV asks for the order's user in the KV bucket "users".
func askKV(r udf.Record, ask *udf.Lookups) error {
	user, ok := stringField(r.Value, userField)
	if !ok {
		return errNoUser
	}
	ask.KV("users", string(user))
	return nil
}

// askHTTP asks for the URL the order names.
func askHTTP(r udf.Record, ask *udf.Lookups) error {
	u, ok := stringField(r.Value, urlField)
	if !ok {
		return errNoURL
	}
	ask.HTTPGet(string(u))
	return nil
}

// out is the buffer results are built in; emit copies them.
var out []byte

// join emits {"order":<order>,"profile":<profile or null>} with the
// order's key and timestamp.
func join(r udf.Record, results []udf.LookupResult, emit func(udf.Record)) error {
	out = append(out[:0], `{"order":`...)
	out = append(out, r.Value...)
	out = append(out, `,"profile":`...)
	if len(results) == 1 && results[0].Found {
		out = append(out, results[0].Value...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, '}')
	emit(udf.Record{Key: r.Key, Value: out, Timestamp: r.Timestamp, Headers: r.Headers})
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
