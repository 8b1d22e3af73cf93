package udf

import (
	"bytes"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
)

// Window is a window's bounds in milliseconds since the epoch: it holds the
// records with Start <= timestamp < End. Its results are stamped End - 1.
type Window struct {
	Start, End int64
}

// AggregateFuncs is an incremental window aggregate over accumulator bytes,
// as Flink's AggregateFunction: the platform stores each window's
// accumulator between calls and gives it back. Add and Merge may modify the
// accumulators they are given and return them.
type AggregateFuncs struct {
	// Create returns an empty accumulator.
	Create func() []byte
	// Add folds a record into acc.
	Add func(acc []byte, r Record) ([]byte, error)
	// Merge folds b into a: windows that merge (sessions) and slices of a
	// sliding window combine their accumulators with it.
	Merge func(a, b []byte) ([]byte, error)
	// Result is the window's output value.
	Result func(key []byte, w Window, acc []byte) ([]byte, error)
}

// Aggregate registers an incremental window aggregate (kind aggregate) over
// accumulator bytes. AggregateOf is the same over a Go type.
func Aggregate(name string, f AggregateFuncs) {
	mustFunc(name, f.Create == nil || f.Add == nil || f.Merge == nil || f.Result == nil)
	registerAggregate(name, &bytesAggregate{f: f})
}

// Codec turns an accumulator of type A into bytes and back.
type Codec[A any] interface {
	Append(dst []byte, acc *A) []byte
	Decode(b []byte, acc *A) error
}

// TypedAggregate is an incremental window aggregate over accumulators of
// type A, stored by the platform as the bytes a Codec makes. Each call of
// the module decodes a window's accumulator once, adds all its records, and
// encodes it once.
type TypedAggregate[A any] struct {
	// Create sets a new accumulator.
	Create func(acc *A)
	// Add folds a record into acc.
	Add func(acc *A, r Record) error
	// Merge folds other into acc.
	Merge func(acc *A, other *A) error
	// Result is the window's output value.
	Result func(key []byte, w Window, acc *A) ([]byte, error)
}

// AggregateOf registers an incremental window aggregate (kind aggregate)
// whose accumulator is a value of type A encoded by codec.
func AggregateOf[A any](name string, codec Codec[A], f TypedAggregate[A]) {
	mustFunc(name, codec == nil || f.Create == nil || f.Add == nil || f.Merge == nil || f.Result == nil)
	registerAggregate(name, &typedAggregate[A]{codec: codec, f: f})
}

// Reduce registers a window reduce function (kind reduce): f folds a
// record's value into the accumulated value, which starts as the first
// record's value and is the window's result. f must be associative, as
// windows combine partial results with it.
func Reduce(name string, f func(acc, value []byte) ([]byte, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindReduce, run: func(c *caller, frame []byte) []byte {
		return c.window.reduce(c, f, frame)
	}})
}

// ProcessWindow registers a window process function (kind window_process),
// as Flink's ProcessWindowFunction: it is called once per window that fires,
// with the window's key, bounds and records (in the order they were added),
// and calls emit for its results. A record emitted with an empty Key takes
// the window's key, and with Timestamp 0 the window's End - 1. If f returns
// an error, what it emitted for the window is discarded.
func ProcessWindow(name string, f func(key []byte, w Window, recs []Record, emit func(Record)) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindWindowProcess, run: func(c *caller, frame []byte) []byte {
		return c.window.process(c, f, frame)
	}})
}

// SessionGap registers a dynamic session gap (kind session_gap): the
// session of a record lasts until its timestamp plus the returned gap in
// milliseconds, which must be positive.
func SessionGap(name string, f func(r Record) (int64, error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindSessionGap, run: func(c *caller, frame []byte) []byte {
		return c.window.sessionGap(c, f, frame)
	}})
}

// Watermark registers a punctuated watermark function (kind watermark): for
// each record, in order, it may return a watermark (ok true) that the
// platform emits right after the record.
func Watermark(name string, f func(r Record) (wm int64, ok bool, err error)) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindWatermark, run: func(c *caller, frame []byte) []byte {
		return c.window.watermark(c, f, frame)
	}})
}

// aggregator is an aggregate's three operations over accumulator bytes;
// add folds every record left in the group gr reads into acc (absent when
// has is false).
type aggregator interface {
	add(acc []byte, has bool, gr *abi.GroupReader) ([]byte, error)
	merge(a, b []byte) ([]byte, error)
	result(key []byte, w Window, acc []byte) ([]byte, error)
}

func registerAggregate(name string, a aggregator) {
	functions.add(function{name: name, kind: abi.KindAggregate, run: func(c *caller, frame []byte) []byte {
		return c.window.aggregate(c, a, frame)
	}})
}

// bytesAggregate runs AggregateFuncs; rec is reused from record to record.
type bytesAggregate struct {
	f   AggregateFuncs
	rec Record
}

func (b *bytesAggregate) add(acc []byte, has bool, gr *abi.GroupReader) ([]byte, error) {
	if !has {
		acc = b.f.Create()
	}
	for gr.NextRecord(&b.rec) {
		var err error
		if acc, err = b.f.Add(acc, b.rec); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func (b *bytesAggregate) merge(x, y []byte) ([]byte, error) { return b.f.Merge(x, y) }

func (b *bytesAggregate) result(key []byte, w Window, acc []byte) ([]byte, error) {
	return b.f.Result(key, w, acc)
}

// typedAggregate runs a TypedAggregate; its accumulators and buffer are
// reused from group to group.
type typedAggregate[A any] struct {
	codec      Codec[A]
	f          TypedAggregate[A]
	acc, other A
	buf        []byte
	rec        Record
}

func (t *typedAggregate[A]) load(acc []byte, has bool) error {
	if !has {
		t.f.Create(&t.acc)
		return nil
	}
	return t.codec.Decode(acc, &t.acc)
}

func (t *typedAggregate[A]) add(acc []byte, has bool, gr *abi.GroupReader) ([]byte, error) {
	if err := t.load(acc, has); err != nil {
		return nil, err
	}
	for gr.NextRecord(&t.rec) {
		if err := t.f.Add(&t.acc, t.rec); err != nil {
			return nil, err
		}
	}
	t.buf = t.codec.Append(t.buf[:0], &t.acc)
	return t.buf, nil
}

func (t *typedAggregate[A]) merge(a, b []byte) ([]byte, error) {
	if err := t.codec.Decode(a, &t.acc); err != nil {
		return nil, err
	}
	if err := t.codec.Decode(b, &t.other); err != nil {
		return nil, err
	}
	if err := t.f.Merge(&t.acc, &t.other); err != nil {
		return nil, err
	}
	t.buf = t.codec.Append(t.buf[:0], &t.acc)
	return t.buf, nil
}

func (t *typedAggregate[A]) result(key []byte, w Window, acc []byte) ([]byte, error) {
	if err := t.codec.Decode(acc, &t.acc); err != nil {
		return nil, err
	}
	return t.f.Result(key, w, &t.acc)
}

// windowCall decodes the grouped frames of the window kinds and encodes
// their answers: entries name groups, except session_gap's, which name
// records.
type windowCall struct {
	gr    abi.GroupReader
	group abi.GroupHead
	recs  []Record
	// ctx is a ProcessWindowWithState function's context.
	ctx Context
	// emitted collects a process function's records for its window.
	emitted  func(Record)
	emitting bool
	index    uint32
	window   Window
	key      []byte
	// stamp is the timestamp of an interval join's pair, given to its
	// records without one; 0 otherwise.
	stamp int64
	// g is the group being run; mark and marked are the output's length
	// and entry count before it, to roll it back when it fails.
	g      uint32
	mark   int
	marked uint32
	rec    Record
}

func (w *windowCall) begin(c *caller, frame []byte) error {
	if err := w.gr.Reset(frame); err != nil {
		return err
	}
	if w.emitted == nil {
		w.emitted = func(r Record) { w.emit(c, r) }
	}
	sideTo = c
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count = 0
	return nil
}

func (w *windowCall) end(c *caller) []byte {
	if err := w.gr.Err(); err != nil {
		return c.fail(err.Error())
	}
	abi.SetCount(c.out, c.count)
	return c.out
}

// each calls one for every group of the frame with w.group set. An error
// fails the group (what it wrote is rolled back); so does a panic, after
// which the loop goes on with the next group. Recovering once per panic
// rather than deferring per group keeps the loop cheap.
func (w *windowCall) each(c *caller, one func(g uint32) error) {
	w.g = 0
	for !w.eachFrom(c, one) {
	}
}

func (w *windowCall) eachFrom(c *caller, one func(g uint32) error) (done bool) {
	defer func() {
		if p := recover(); p != nil {
			w.emitting, w.ctx.active = false, false
			w.failGroup(c, fmt.Errorf("panic: %v", p))
			w.g++
		}
	}()
	for ; w.gr.NextGroup(&w.group); w.g++ {
		w.mark, w.marked = len(c.out), c.count
		if err := one(w.g); err != nil {
			w.failGroup(c, err)
		}
	}
	return true
}

// failGroup replaces what the current group wrote with an error entry.
func (w *windowCall) failGroup(c *caller, err error) {
	c.out, c.count = c.out[:w.mark], w.marked
	c.out = abi.AppendEntryError(c.out, w.g, err.Error())
	c.count++
}

func (w *windowCall) aggregate(c *caller, a aggregator, frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	op := w.gr.Head().Op
	w.each(c, func(g uint32) error {
		grp := &w.group
		var acc []byte
		var err error
		switch op {
		case abi.OpAdd:
			if acc, err = a.add(grp.Acc, grp.Flags&abi.GroupAcc != 0, &w.gr); err == nil {
				c.out = abi.AppendEntryAccumulator(c.out, g, acc)
			}
		case abi.OpMerge:
			if acc, err = a.merge(grp.Acc, grp.Acc2); err == nil {
				c.out = abi.AppendEntryAccumulator(c.out, g, acc)
			}
		case abi.OpResult:
			if acc, err = a.result(grp.Key, Window{Start: grp.WindowStart, End: grp.WindowEnd}, grp.Acc); err == nil {
				w.rec = Record{Value: acc}
				c.out = abi.AppendEntryRecord(c.out, g, 0, &w.rec)
			}
		default:
			err = fmt.Errorf("udf: aggregate called with op %d", op)
		}
		if err == nil {
			c.count++
		}
		return err
	})
	return w.end(c)
}

func (w *windowCall) reduce(c *caller, f func(acc, value []byte) ([]byte, error), frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	op := w.gr.Head().Op
	w.each(c, func(g uint32) error {
		grp := &w.group
		acc, has := grp.Acc, grp.Flags&abi.GroupAcc != 0
		var err error
		switch op {
		case abi.OpAdd:
			for err == nil && w.gr.NextRecord(&w.rec) {
				if !has {
					acc, has = w.rec.Value, true
				} else {
					acc, err = f(acc, w.rec.Value)
				}
			}
			if err == nil && !has {
				err = errors.New("udf: reduce called without a value")
			}
		case abi.OpMerge:
			acc, err = f(grp.Acc, grp.Acc2)
		default:
			err = fmt.Errorf("udf: reduce called with op %d", op)
		}
		if err != nil {
			return err
		}
		c.out = abi.AppendEntryAccumulator(c.out, g, acc)
		c.count++
		return nil
	})
	return w.end(c)
}

func (w *windowCall) process(c *caller, f func([]byte, Window, []Record, func(Record)) error, frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	w.each(c, func(g uint32) error {
		n := w.readRecords()
		w.index, w.key = g, w.group.Key
		w.window = Window{Start: w.group.WindowStart, End: w.group.WindowEnd}
		w.emitting = true
		err := f(w.key, w.window, w.recs[:n], w.emitted)
		w.emitting = false
		return err
	})
	return w.end(c)
}

// readRecords decodes the current group's records into w.recs.
func (w *windowCall) readRecords() int { return w.readRecordsFrom(0) }

// readRecordsFrom decodes the current group's records into w.recs from
// index from on and returns how many there were.
func (w *windowCall) readRecordsFrom(from int) int {
	n := from
	for {
		if n == len(w.recs) {
			w.recs = append(w.recs, Record{})
		}
		if !w.gr.NextRecord(&w.recs[n]) {
			return n - from
		}
		n++
	}
}

// emit appends a process function's record: an empty key and a zero
// timestamp are left to the host to fill in with the window's.
func (w *windowCall) emit(c *caller, r Record) {
	if !w.emitting {
		panic("udf: emit called after its function returned")
	}
	flags := w.flagsOf(&r)
	c.out = abi.AppendEntryRecord(c.out, w.index, flags, &r)
	c.count++
}

// flagsOf says which of r's fields an entry of the current group carries:
// an empty key and a zero timestamp are left to the host to fill in with
// the group's (for an interval join's pair, stamp is its timestamp).
func (w *windowCall) flagsOf(r *Record) abi.RecordFlags {
	if r.Timestamp == 0 && w.stamp != 0 {
		r.Timestamp = w.stamp
	}
	var flags abi.RecordFlags
	if len(r.Key) > 0 && !bytes.Equal(r.Key, w.key) {
		flags |= abi.HasKey
	}
	if r.Timestamp != 0 && r.Timestamp != w.window.End-1 {
		flags |= abi.HasTimestamp
	}
	if len(r.Headers) > 0 {
		flags |= abi.HasHeaders
	}
	return flags
}

// perRecord calls one for records 0..n-1 of w.recs; an error or a panic
// fails the record, and the loop goes on with the next.
func (w *windowCall) perRecord(c *caller, n int, one func(i int) error) {
	for i := 0; i < n; {
		i = w.perRecordFrom(c, i, n, one)
	}
}

func (w *windowCall) perRecordFrom(c *caller, from, n int, one func(i int) error) (next int) {
	defer func() {
		if p := recover(); p != nil {
			c.out = abi.AppendEntryError(c.out, uint32(next), fmt.Sprintf("panic: %v", p))
			c.count++
			next++
		}
	}()
	for next = from; next < n; next++ {
		if err := one(next); err != nil {
			c.out = abi.AppendEntryError(c.out, uint32(next), err.Error())
			c.count++
		}
	}
	return n
}

func (w *windowCall) sessionGap(c *caller, f func(Record) (int64, error), frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	n := 0
	for w.gr.NextGroup(&w.group) {
		n += w.readRecordsFrom(n)
	}
	w.perRecord(c, n, func(i int) error {
		gap, err := f(w.recs[i])
		if err == nil && gap <= 0 {
			err = fmt.Errorf("udf: session gap %d is not positive", gap)
		}
		if err == nil {
			c.out = abi.AppendEntryTimestamp(c.out, uint32(i), gap)
			c.count++
		}
		return err
	})
	return w.end(c)
}

// watermark runs a punctuated watermark function over an input frame (not
// a grouped one).
func (w *windowCall) watermark(c *caller, f func(Record) (int64, bool, error), frame []byte) []byte {
	if err := c.in.Reset(frame); err != nil {
		return c.fail(err.Error())
	}
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count = 0
	n := 0
	for {
		if n == len(w.recs) {
			w.recs = append(w.recs, Record{})
		}
		if !c.in.Next(&w.recs[n]) {
			break
		}
		n++
	}
	if err := c.in.Err(); err != nil {
		return c.fail(err.Error())
	}
	w.perRecord(c, n, func(i int) error {
		wm, ok, err := f(w.recs[i])
		if err == nil && ok {
			c.out = abi.AppendEntryWatermark(c.out, uint32(i), wm)
			c.count++
		}
		return err
	})
	abi.SetCount(c.out, c.count)
	return c.out
}
