package runtime

import (
	"context"
	"strconv"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// windowOut collects a window operator's results, copied, and passes them on
// in batches.
type windowOut struct {
	batch abi.Batch
	max   int
	next  operator.Stage
	// scratch formats built-in results.
	scratch []byte
}

// emit copies a result; flushIfFull or flush pass results on.
func (o *windowOut) emit(key, value []byte, ts int64, headers []abi.Header) {
	o.batch.AppendParts(key, value, ts, headers)
}

// flushIfFull passes the results on once there is a batch of them.
func (o *windowOut) flushIfFull(ctx context.Context) error {
	if o.batch.Len() >= o.max {
		return o.flush(ctx)
	}
	return nil
}

// flush passes the collected results on.
func (o *windowOut) flush(ctx context.Context) error {
	if o.batch.Len() == 0 {
		return nil
	}
	err := o.next.Process(ctx, o.batch.Records)
	o.batch.Reset()
	return err
}

// emitEntry emits a TagRecord entry of a grouped call: fields it does not
// set are inherited, the key from the group and the timestamp window_end - 1.
func (o *windowOut) emitEntry(e *abi.Entry, key []byte, end int64) {
	ts := end - 1
	if e.Flags&abi.HasKey != 0 {
		key = e.Key
	}
	if e.Flags&abi.HasTimestamp != 0 {
		ts = e.Timestamp
	}
	var hs []abi.Header
	if e.Flags&abi.HasHeaders != 0 {
		hs = e.Headers
	}
	o.emit(key, e.Value, ts, hs)
}

// emitBuiltin emits a built-in aggregate's result:
// {"key": "...", "window_start": ms, "window_end": ms, "value": n}.
func (o *windowOut) emitBuiltin(key []byte, start, end int64, value []byte) {
	b := append(o.scratch[:0], `{"key":`...)
	b = appendJSONString(b, key)
	b = append(b, `,"window_start":`...)
	b = strconv.AppendInt(b, start, 10)
	b = append(b, `,"window_end":`...)
	b = strconv.AppendInt(b, end, 10)
	b = append(b, `,"value":`...)
	b = append(b, value...)
	b = append(b, '}')
	o.scratch = b
	o.emit(key, b, end-1, nil)
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
