package operator

import (
	"context"
	"strconv"
	"unicode/utf8"

	"wasmstream.io/platform/abi"
)

// Out collects a window operator's results, copied, and passes them on
// in batches.
type Out struct {
	Batch abi.Batch
	Max   int
	Next  Stage
	// scratch formats built-in results.
	scratch []byte
}

// Emit copies a result; flushIfFull or flush pass results on.
func (o *Out) Emit(key, value []byte, ts int64, headers []abi.Header) {
	o.Batch.AppendParts(key, value, ts, headers)
}

// FlushIfFull passes the results on once there is a batch of them.
func (o *Out) FlushIfFull(ctx context.Context) error {
	if o.Batch.Len() >= o.Max {
		return o.Flush(ctx)
	}
	return nil
}

// Flush passes the collected results on.
func (o *Out) Flush(ctx context.Context) error {
	if o.Batch.Len() == 0 {
		return nil
	}
	err := o.Next.Process(ctx, o.Batch.Records)
	o.Batch.Reset()
	return err
}

// EmitEntry emits a TagRecord entry of a grouped call: fields it does not
// set are inherited, the key from the group and the timestamp window_end - 1.
func (o *Out) EmitEntry(e *abi.Entry, key []byte, end int64) {
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
	o.Emit(key, e.Value, ts, hs)
}

// EmitBuiltin emits a built-in aggregate's result:
// {"key": "...", "window_start": ms, "window_end": ms, "value": n}.
func (o *Out) EmitBuiltin(key []byte, start, end int64, value []byte) {
	b := append(o.scratch[:0], `{"key":`...)
	b = AppendJSONString(b, key)
	b = append(b, `,"window_start":`...)
	b = strconv.AppendInt(b, start, 10)
	b = append(b, `,"window_end":`...)
	b = strconv.AppendInt(b, end, 10)
	b = append(b, `,"value":`...)
	b = append(b, value...)
	b = append(b, '}')
	o.scratch = b
	o.Emit(key, b, end-1, nil)
}

// AppendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func AppendJSONString(b, s []byte) []byte {
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
