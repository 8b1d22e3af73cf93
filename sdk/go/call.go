package udf

import (
	"bytes"
	"fmt"

	"wasmstream.io/platform/abi"
)

// caller runs registered functions over input frames and encodes their
// output frames. Its buffers are reused from call to call, so a caller that
// has reached its working size allocates nothing per record.
type caller struct {
	reg   *registry
	in    abi.InputReader
	rec   Record
	index uint32
	out   []byte
	count uint32
	// mark and marked are the output's length and entry count before the
	// current record, to roll its entries back when it fails.
	mark   int
	marked uint32
	// flatMapping is true while a flat map function runs, so a stray emit
	// fails.
	flatMapping bool
	// emit is c.emitFromFlatMap, bound once so passing it does not allocate.
	emit func(Record)
	// key, headers and saved are a copy of the input record's key and
	// headers, taken before the function may modify them in place.
	key     []byte
	headers []Header
	saved   []byte
	// keyed decodes the grouped frames of process and on_timer functions.
	keyed keyedCall
	// window decodes the frames of the window kinds (window.go).
	window windowCall
}

func newCaller(reg *registry) *caller {
	c := &caller{reg: reg}
	c.emit = c.emitFromFlatMap
	return c
}

// call runs function fn over an input frame and returns the output frame,
// which aliases the caller's buffer until the next call.
func (c *caller) call(fn uint32, frame []byte) []byte {
	if fn >= uint32(len(c.reg.funcs)) {
		return c.fail(fmt.Sprintf("udf: no function with index %d; the module has %d", fn, len(c.reg.funcs)))
	}
	f := &c.reg.funcs[fn]
	if f.run != nil {
		return f.run(c, frame)
	}
	if err := c.in.Reset(frame); err != nil {
		return c.fail(err.Error())
	}
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count = 0
	c.index = 0
	for !c.each(f) {
	}
	if err := c.in.Err(); err != nil {
		return c.fail(err.Error())
	}
	abi.SetCount(c.out, c.count)
	return c.out
}

// fail makes the output frame a single error that fails the whole frame.
func (c *caller) fail(msg string) []byte {
	c.out = abi.AppendEntryError(abi.AppendInputHeader(c.out[:0], 1), abi.AllRecords, msg)
	c.count = 1
	return c.out
}

// each runs f over the frame's remaining records. A panic turns into an
// error for the record that raised it and ends each early, returning false,
// so that call resumes with the next record. Recovering once per panic
// rather than deferring per record keeps the loop cheap.
func (c *caller) each(f *function) (done bool) {
	defer func() {
		if p := recover(); p != nil {
			c.flatMapping = false
			c.reject(fmt.Sprintf("panic: %v", p))
			c.index++
		}
	}()
	for ; c.in.Next(&c.rec); c.index++ {
		c.mark, c.marked = len(c.out), c.count
		var err error
		switch {
		case f.mapFn != nil:
			c.snapshot()
			var out Record
			if out, err = f.mapFn(c.rec); err == nil {
				c.emitRecord(&out)
			}
		case f.filterFn != nil:
			var keep bool
			if keep, err = f.filterFn(c.rec); err == nil && keep {
				c.out = abi.AppendEntryKeep(c.out, c.index)
				c.count++
			}
		case f.flatMapFn != nil:
			c.snapshot()
			c.flatMapping = true
			err = f.flatMapFn(c.rec, c.emit)
			c.flatMapping = false
		case f.keyFn != nil:
			var key []byte
			if key, err = f.keyFn(c.rec); err == nil {
				c.out = abi.AppendEntryKey(c.out, c.index, key)
				c.count++
			}
		case f.timestampFn != nil:
			var ts int64
			if ts, err = f.timestampFn(c.rec); err == nil {
				c.out = abi.AppendEntryTimestamp(c.out, c.index, ts)
				c.count++
			}
		}
		if err != nil {
			c.reject(err.Error())
		}
	}
	return true
}

// reject replaces the current record's entries with an error.
func (c *caller) reject(msg string) {
	c.out, c.count = c.out[:c.mark], c.marked
	c.out = abi.AppendEntryError(c.out, c.index, msg)
	c.count++
}

// snapshot copies the current record's key and headers.
func (c *caller) snapshot() {
	c.saved = append(c.saved[:0], c.rec.Key...)
	c.key = c.saved
	if len(c.rec.Headers) == 0 {
		c.headers = c.headers[:0]
		return
	}
	for _, h := range c.rec.Headers {
		c.saved = append(append(c.saved, h.Name...), h.Value...)
	}
	c.key = c.saved[:len(c.rec.Key)]
	off := len(c.rec.Key)
	c.headers = c.headers[:0]
	for _, h := range c.rec.Headers {
		name, value := off+len(h.Name), off+len(h.Name)+len(h.Value)
		c.headers = append(c.headers, Header{Name: c.saved[off:name], Value: c.saved[name:value]})
		off = value
	}
}

func (c *caller) emitFromFlatMap(r Record) {
	if !c.flatMapping {
		panic("udf: emit called after its function returned")
	}
	c.emitRecord(&r)
}

// emitRecord appends a record entry for the current input. Fields equal to
// the input's are left out, so the host inherits them.
func (c *caller) emitRecord(r *Record) {
	var flags abi.RecordFlags
	if !bytes.Equal(r.Key, c.key) {
		flags |= abi.HasKey
	}
	if r.Timestamp != c.rec.Timestamp {
		flags |= abi.HasTimestamp
	}
	if !sameHeaders(r.Headers, c.headers) {
		flags |= abi.HasHeaders
	}
	c.out = abi.AppendEntryRecord(c.out, c.index, flags, r)
	c.count++
}

func sameHeaders(a, b []Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Name, b[i].Name) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}
