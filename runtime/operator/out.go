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
	// Tracer, when set (to Next, when it is one), is told the window each
	// result answers, as a record with the window's key and its end - 1 as
	// timestamp. Jobs leave it nil.
	Tracer Tracer
	// Sides are the operator's side outputs; nil without.
	Sides *SideOutputs
	// scratch formats built-in results.
	scratch []byte
	// traced are the windows of Batch's results when tracing, their keys
	// copied into keys (a window's key may be dropped before the flush);
	// windows and origins are what Answers is given.
	traced  []tracedWindow
	keys    []byte
	windows []abi.Record
	origins []*abi.Record
}

// tracedWindow is the window of a result: key keys[off:off+n], end.
type tracedWindow struct {
	off, n int
	end    int64
}

// Emit copies a result; flushIfFull or flush pass results on. With a
// Tracer, the result answers the window of key ending at ts + 1.
func (o *Out) Emit(key, value []byte, ts int64, headers []abi.Header) {
	o.trace(key, ts+1)
	o.Batch.AppendParts(key, value, ts, headers)
}

// trace notes the window of the result about to be appended. Results the
// caller truncated from Batch since are dropped first.
func (o *Out) trace(key []byte, end int64) {
	if o.Tracer == nil {
		return
	}
	o.traced = o.traced[:o.Batch.Len()]
	o.keys = o.keys[:0]
	if n := len(o.traced); n > 0 {
		o.keys = o.keys[:o.traced[n-1].off+o.traced[n-1].n]
	}
	o.traced = append(o.traced, tracedWindow{off: len(o.keys), n: len(key), end: end})
	o.keys = append(o.keys, key...)
}

// FlushIfFull passes the results on once there is a batch of them.
func (o *Out) FlushIfFull(ctx context.Context) error {
	if o.Batch.Len() >= o.Max || o.Sides.Full() {
		return o.Flush(ctx)
	}
	return nil
}

// Flush passes the collected results on, and then the side outputs'.
func (o *Out) Flush(ctx context.Context) error {
	if err := o.flushMain(ctx); err != nil {
		return err
	}
	return o.Sides.Flush(ctx)
}

func (o *Out) flushMain(ctx context.Context) error {
	if o.Batch.Len() == 0 {
		return nil
	}
	if o.Tracer != nil {
		o.windows, o.origins = o.windows[:0], o.origins[:0]
		for _, t := range o.traced[:o.Batch.Len()] {
			o.windows = append(o.windows, abi.Record{Key: o.keys[t.off : t.off+t.n], Timestamp: t.end - 1})
		}
		for i := range o.windows {
			o.origins = append(o.origins, &o.windows[i])
		}
		o.Tracer.Answers(o.origins)
	}
	err := o.Next.Process(ctx, o.Batch.Records)
	o.Batch.Reset()
	o.traced, o.keys = o.traced[:0], o.keys[:0]
	return err
}

// EmitEntry emits a TagRecord entry of a grouped call, or a TagOutput entry
// on its side output (which the caller found declared): fields it does not
// set are inherited, the key from the group and the timestamp window_end - 1.
func (o *Out) EmitEntry(e *abi.Entry, key []byte, end int64) {
	groupKey := key
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
	if e.Tag == abi.TagOutput {
		o.Sides.Emit(o.Sides.Find(e.Output), key, e.Value, ts, hs)
		return
	}
	o.trace(groupKey, end)
	o.Batch.AppendParts(key, e.Value, ts, hs)
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
	o.trace(key, end)
	o.Batch.AppendParts(key, b, end-1, nil)
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
