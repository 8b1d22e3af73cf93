package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Header is one record header. A name may repeat.
type Header struct {
	Name  []byte
	Value []byte
}

// Record is the unit of data: a key, a value, an event timestamp in
// milliseconds since the epoch, and headers. Slices decoded from a frame alias
// the frame's bytes.
type Record struct {
	Key       []byte
	Value     []byte
	Timestamp int64
	Headers   []Header
}

// Size is the record's encoded size in an input frame.
func (r *Record) Size() int {
	n := 4 + len(r.Key) + 4 + len(r.Value) + 8 + 4
	for _, h := range r.Headers {
		n += 8 + len(h.Name) + len(h.Value)
	}
	return n
}

// Tag says what an output entry is.
type Tag uint8

// Output entry tags.
const (
	// TagRecord emits a record; the entry carries RecordFlags saying which
	// fields it sets, the others are inherited from the input record.
	TagRecord Tag = 1
	// TagError reports that the input record failed, with a UTF-8 message.
	TagError Tag = 2
	// TagKeep keeps the input record unchanged (filter).
	TagKeep Tag = 3
	// TagKey sets the key of the input record (key selector).
	TagKey Tag = 4
	// TagTimestamp sets the timestamp of the input record (timestamp
	// assigner).
	TagTimestamp Tag = 5
	// TagAccumulator carries the new accumulator of a group (aggregate and
	// reduce functions over grouped frames).
	TagAccumulator Tag = 6
	// TagWatermark emits a punctuated watermark after the input record
	// (watermark functions).
	TagWatermark Tag = 7
)

// RecordFlags say which fields a TagRecord entry carries. The value is always
// present.
type RecordFlags uint8

// Record entry flags.
const (
	HasKey       RecordFlags = 1 << 0
	HasTimestamp RecordFlags = 1 << 1
	HasHeaders   RecordFlags = 1 << 2
)

// AllRecords is the input index of an error entry that fails the whole frame.
const AllRecords = ^uint32(0)

// ErrMalformedFrame is wrapped by every decoding error.
var ErrMalformedFrame = errors.New("malformed frame")

// Entry is one decoded output entry. Fields not set by the entry's tag are
// zero; for TagRecord, Flags says which of Key, Timestamp and Headers are set.
// A TagAccumulator's bytes are in Value; a TagWatermark's in Timestamp.
type Entry struct {
	Tag       Tag
	Index     uint32
	Flags     RecordFlags
	Key       []byte
	Value     []byte
	Timestamp int64
	Headers   []Header
	Message   []byte
	// Output is the side output a TagOutput entry names.
	Output []byte
	// Result is a TagTrigger entry's answer; Delete and Domain say what a
	// TagTimer entry does (abi/trigger.go).
	Result TriggerResult
	Delete bool
	Domain TimeDomain
}

// Apply is the record the host passes on for a record, key or timestamp
// entry answering in: the fields the entry does not set are the input's.
// The result shares the entry's bytes.
func (e *Entry) Apply(in *Record) Record {
	out := *in
	switch e.Tag {
	case TagRecord, TagOutput:
		out.Value = e.Value
		if e.Flags&HasKey != 0 {
			out.Key = e.Key
		}
		if e.Flags&HasTimestamp != 0 {
			out.Timestamp = e.Timestamp
		}
		if e.Flags&HasHeaders != 0 {
			out.Headers = e.Headers
		}
	case TagKey:
		out.Key = e.Key
	case TagTimestamp:
		out.Timestamp = e.Timestamp
	}
	return out
}

func malformed(off int, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrMalformedFrame, off, fmt.Sprintf(format, args...))
}

// AppendInputHeader starts an input frame of count records.
func AppendInputHeader(dst []byte, count uint32) []byte {
	return binary.LittleEndian.AppendUint32(dst, count)
}

// AppendFrame appends a whole input frame of recs.
func AppendFrame(dst []byte, recs []Record) []byte {
	dst = AppendInputHeader(dst, uint32(len(recs)))
	for i := range recs {
		dst = AppendRecord(dst, &recs[i])
	}
	return dst
}

// SetCount overwrites the count of a frame started at dst[0].
func SetCount(frame []byte, count uint32) { binary.LittleEndian.PutUint32(frame, count) }

// AppendRecord appends one record of an input frame.
func AppendRecord(dst []byte, r *Record) []byte {
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Timestamp))
	return appendHeaders(dst, r.Headers)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

func appendHeaders(dst []byte, hs []Header) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(hs)))
	for _, h := range hs {
		dst = appendBytes(dst, h.Name)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

// AppendEntryRecord appends a TagRecord output entry for input index. Only the
// fields named by flags are written.
func AppendEntryRecord(dst []byte, index uint32, flags RecordFlags, r *Record) []byte {
	dst = append(dst, byte(TagRecord))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return appendRecordBody(dst, flags, r)
}

// appendRecordBody appends the body of a record entry: flags, then the
// fields they name and the value.
func appendRecordBody(dst []byte, flags RecordFlags, r *Record) []byte {
	dst = append(dst, byte(flags))
	if flags&HasKey != 0 {
		dst = appendBytes(dst, r.Key)
	}
	dst = appendBytes(dst, r.Value)
	if flags&HasTimestamp != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Timestamp))
	}
	if flags&HasHeaders != 0 {
		dst = appendHeaders(dst, r.Headers)
	}
	return dst
}

// AppendEntryError appends a TagError entry for input index (or AllRecords).
func AppendEntryError(dst []byte, index uint32, msg string) []byte {
	dst = append(dst, byte(TagError))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// AppendEntryKeep appends a TagKeep entry for input index.
func AppendEntryKeep(dst []byte, index uint32) []byte {
	dst = append(dst, byte(TagKeep))
	return binary.LittleEndian.AppendUint32(dst, index)
}

// AppendEntryKey appends a TagKey entry for input index.
func AppendEntryKey(dst []byte, index uint32, key []byte) []byte {
	dst = append(dst, byte(TagKey))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return appendBytes(dst, key)
}

// AppendEntryTimestamp appends a TagTimestamp entry for input index.
func AppendEntryTimestamp(dst []byte, index uint32, ts int64) []byte {
	dst = append(dst, byte(TagTimestamp))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return binary.LittleEndian.AppendUint64(dst, uint64(ts))
}

// AppendEntryAccumulator appends a TagAccumulator entry for group index.
func AppendEntryAccumulator(dst []byte, index uint32, acc []byte) []byte {
	dst = append(dst, byte(TagAccumulator))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return appendBytes(dst, acc)
}

// AppendEntryWatermark appends a TagWatermark entry after input index.
func AppendEntryWatermark(dst []byte, index uint32, wm int64) []byte {
	dst = append(dst, byte(TagWatermark))
	dst = binary.LittleEndian.AppendUint32(dst, index)
	return binary.LittleEndian.AppendUint64(dst, uint64(wm))
}

// reader walks a frame with bounds checks.
type reader struct {
	buf []byte
	off int
	err error
}

func (r *reader) u8() uint8 {
	if r.err != nil {
		return 0
	}
	if r.off+1 > len(r.buf) {
		r.err = malformed(r.off, "want 1 byte, have %d", len(r.buf)-r.off)
		return 0
	}
	v := r.buf[r.off]
	r.off++
	return v
}

func (r *reader) u32() uint32 {
	if r.err != nil {
		return 0
	}
	if r.off+4 > len(r.buf) {
		r.err = malformed(r.off, "want 4 bytes, have %d", len(r.buf)-r.off)
		return 0
	}
	v := binary.LittleEndian.Uint32(r.buf[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if r.off+8 > len(r.buf) {
		r.err = malformed(r.off, "want 8 bytes, have %d", len(r.buf)-r.off)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.buf[r.off:])
	r.off += 8
	return v
}

func (r *reader) bytes() []byte {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.buf)-r.off) {
		r.err = malformed(r.off-4, "length %d exceeds the %d bytes left", n, len(r.buf)-r.off)
		return nil
	}
	b := r.buf[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return b
}

func (r *reader) headers(dst []Header) []Header {
	n := r.u32()
	if r.err != nil {
		return dst
	}
	// Each header takes at least 8 bytes: refuse counts the frame cannot hold
	// before allocating for them.
	if uint64(n)*8 > uint64(len(r.buf)-r.off) {
		r.err = malformed(r.off-4, "header count %d exceeds the frame", n)
		return dst
	}
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.bytes()
		value := r.bytes()
		dst = append(dst, Header{Name: name, Value: value})
	}
	return dst
}

// InputReader decodes an input frame record by record without allocating
// (beyond growing the caller's header slice).
type InputReader struct {
	r     reader
	count uint32
	read  uint32
}

// NewInputReader starts decoding frame.
func NewInputReader(frame []byte) (*InputReader, error) {
	ir := &InputReader{}
	return ir, ir.Reset(frame)
}

// Reset starts decoding another frame.
func (ir *InputReader) Reset(frame []byte) error {
	ir.r = reader{buf: frame}
	ir.count = ir.r.u32()
	ir.read = 0
	return ir.r.err
}

// Count is the number of records the frame declares.
func (ir *InputReader) Count() uint32 { return ir.count }

// Next decodes the next record into rec, whose slices alias the frame. It
// returns false at the end of the frame or on error; Err tells which.
//
// The common case (no headers) is decoded in one flat function with one
// bounds check per field: Go's Wasm backend calls small functions without
// inlining them, so a UDF built with the Go SDK pays for every call.
func (ir *InputReader) Next(rec *Record) bool {
	if ir.read >= ir.count || ir.r.err != nil {
		return false
	}
	buf, off := ir.r.buf, ir.r.off
	if len(buf)-off < 4 {
		return ir.slowNext(rec)
	}
	n := int(binary.LittleEndian.Uint32(buf[off:]))
	if n > len(buf)-off-4 {
		return ir.slowNext(rec)
	}
	key := buf[off+4 : off+4+n : off+4+n]
	off += 4 + n
	if len(buf)-off < 4 {
		return ir.slowNext(rec)
	}
	n = int(binary.LittleEndian.Uint32(buf[off:]))
	if n > len(buf)-off-16 {
		return ir.slowNext(rec)
	}
	value := buf[off+4 : off+4+n : off+4+n]
	off += 4 + n
	ts := int64(binary.LittleEndian.Uint64(buf[off:]))
	if binary.LittleEndian.Uint32(buf[off+8:]) != 0 {
		return ir.slowNext(rec)
	}
	rec.Key, rec.Value, rec.Timestamp, rec.Headers = key, value, ts, rec.Headers[:0]
	ir.r.off = off + 12
	ir.read++
	return true
}

// slowNext decodes a record with headers, or reports where a frame is
// malformed.
func (ir *InputReader) slowNext(rec *Record) bool {
	rec.Key = ir.r.bytes()
	rec.Value = ir.r.bytes()
	rec.Timestamp = int64(ir.r.u64())
	rec.Headers = ir.r.headers(rec.Headers[:0])
	if ir.r.err != nil {
		return false
	}
	ir.read++
	return true
}

// Err is the first decoding error, including a frame that ends before its
// declared count or has bytes after it.
func (ir *InputReader) Err() error {
	if ir.r.err != nil {
		return ir.r.err
	}
	if ir.read == ir.count && ir.r.off != len(ir.r.buf) {
		return malformed(ir.r.off, "%d trailing bytes after %d records", len(ir.r.buf)-ir.r.off, ir.count)
	}
	return nil
}

// OutputReader decodes an output frame entry by entry. Entry indexes are
// checked against the input frame's record count.
type OutputReader struct {
	r      reader
	count  uint32
	read   uint32
	inputs uint32
}

// Reset starts decoding an output frame answering an input of inputs records.
func (or *OutputReader) Reset(frame []byte, inputs uint32) error {
	or.r = reader{buf: frame}
	or.count = or.r.u32()
	or.read = 0
	or.inputs = inputs
	return or.r.err
}

// Count is the number of entries the frame declares.
func (or *OutputReader) Count() uint32 { return or.count }

// Next decodes the next entry into e, whose slices alias the frame. It
// returns false at the end or on error; Err tells which.
func (or *OutputReader) Next(e *Entry) bool {
	if or.read >= or.count || or.r.err != nil {
		return false
	}
	start := or.r.off
	*e = Entry{Tag: Tag(or.r.u8()), Index: or.r.u32(), Headers: e.Headers[:0]}
	if or.r.err != nil {
		return false
	}
	if e.Index >= or.inputs && !(e.Tag == TagError && e.Index == AllRecords) {
		or.r.err = malformed(start+1, "entry %d names input %d of %d", or.read, e.Index, or.inputs)
		return false
	}
	switch e.Tag {
	case TagRecord:
		or.recordBody(e)
	case TagOutput:
		at := or.r.off
		if e.Output = or.r.bytes(); or.r.err == nil && len(e.Output) > MaxOutputName {
			or.r.err = malformed(at, "side output name of %d bytes, more than %d", len(e.Output), MaxOutputName)
		}
		or.recordBody(e)
	case TagError:
		e.Message = or.r.bytes()
	case TagKeep:
	case TagKey:
		e.Key = or.r.bytes()
	case TagTimestamp, TagWatermark:
		e.Timestamp = int64(or.r.u64())
	case TagAccumulator:
		e.Value = or.r.bytes()
	case TagTrigger:
		or.triggerBody(e)
	case TagTimer:
		or.timerBody(e)
	default:
		or.r.err = malformed(start, "unknown entry tag %d", uint8(e.Tag))
	}
	if or.r.err != nil {
		return false
	}
	or.read++
	return true
}

// recordBody decodes the body of a record entry (TagRecord, and TagOutput
// after its name) into e.
func (or *OutputReader) recordBody(e *Entry) {
	at := or.r.off
	e.Flags = RecordFlags(or.r.u8())
	if or.r.err == nil && e.Flags&^(HasKey|HasTimestamp|HasHeaders) != 0 {
		or.r.err = malformed(at, "unknown record flags %#x", uint8(e.Flags))
		return
	}
	if e.Flags&HasKey != 0 {
		e.Key = or.r.bytes()
	}
	e.Value = or.r.bytes()
	if e.Flags&HasTimestamp != 0 {
		e.Timestamp = int64(or.r.u64())
	}
	if e.Flags&HasHeaders != 0 {
		e.Headers = or.r.headers(e.Headers)
	}
}

// Err is the first decoding error, including a short frame or trailing bytes.
func (or *OutputReader) Err() error {
	if or.r.err != nil {
		return or.r.err
	}
	if or.read == or.count && or.r.off != len(or.r.buf) {
		return malformed(or.r.off, "%d trailing bytes after %d entries", len(or.r.buf)-or.r.off, or.count)
	}
	return nil
}
