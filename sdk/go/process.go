package udf

import (
	"bytes"
	"fmt"

	"wasmstream.io/platform/abi"
)

// TimeDomain is the clock of a timer.
type TimeDomain = abi.TimeDomain

// Time domains.
const (
	// EventTime timers fire when the watermark reaches their timestamp.
	EventTime = abi.EventTime
	// ProcessingTime timers fire when the platform's clock does.
	ProcessingTime = abi.ProcessingTime
)

// NoWatermark is Context.Watermark before the first watermark.
const NoWatermark = abi.NoWatermark

// Timer is a timer that fired.
type Timer struct {
	Timestamp int64
	Domain    TimeDomain
}

// Process registers a keyed process function, as Flink's
// KeyedProcessFunction: an operator after key_by calls it with the records
// of one key at a time (in arrival order), and it reads and writes that
// key's state (declared with ValueState, ListState, MapState), registers
// timers and emits records through ctx. A record emitted by Emit
// is passed on as it is; EmitValue emits a value with the current key and
// the timestamp of the last of recs.
//
// If f returns an error or panics, every record of recs fails with it and
// what f emitted for them is discarded; the state f changed stays changed.
// The job's on_udf_error then decides.
func Process(name string, f func(ctx *Context, key []byte, recs []Record) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindProcess, run: func(c *caller, frame []byte) []byte {
		return c.keyed.process(c, f, frame)
	}})
}

// OnTimer registers the function that handles the timers of a keyed process
// function (the job spec names it in the operator's on_timer): it is called
// once per timer that fires, with the timer's key, and may use state,
// timers and emit as the process function does. EmitValue emits with the
// timer's key and timestamp.
func OnTimer(name string, f func(ctx *Context, key []byte, t Timer) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindOnTimer, run: func(c *caller, frame []byte) []byte {
		return c.keyed.onTimer(c, f, frame)
	}})
}

// Context is what a keyed function sees of the platform during the call for
// one key (and window): the key, time, state access, timers and emission.
// It is valid only until the function returns.
type Context struct {
	c      *caller
	active bool
	key    []byte
	wm     int64
	now    int64
	// index is the output index of what is emitted, and base the record
	// it inherits from (the group's last record, the timer, or the
	// window's key and End - 1).
	index uint32
	base  Record
	// window is set for a window process function, which has no timers.
	// It enters its group (group) on its first state access: one whose
	// module declares no states gets no state from the platform.
	window  bool
	entered bool
	group   uint32
}

func (ctx *Context) check() {
	if ctx == nil || !ctx.active {
		panic("udf: state, timers or emit used outside the call of a keyed function")
	}
}

// enter checks a state access and makes sure the platform's state calls act
// on the context's group.
func (ctx *Context) enter() {
	ctx.check()
	if !ctx.entered {
		hostEnter(ctx.group)
		ctx.entered = true
	}
}

// timers checks a timer call: window process functions have none.
func (ctx *Context) timers() {
	ctx.check()
	if ctx.window {
		panic("udf: window process functions have no timers (as Flink's ProcessWindowFunction): a window fires when the watermark passes its end")
	}
}

// Key is the current key.
func (ctx *Context) Key() []byte { return ctx.key }

// Watermark is the operator's current event time: NoWatermark before the
// first watermark.
func (ctx *Context) Watermark() int64 { return ctx.wm }

// ProcessingTime is the platform's clock at the call, in milliseconds since
// the epoch.
func (ctx *Context) ProcessingTime() int64 { return ctx.now }

// differs flags the fields of r that differ from the current input's: the
// platform fills in the others, so an output sends only what it changes.
func (ctx *Context) differs(r *Record) abi.RecordFlags {
	var flags abi.RecordFlags
	if !bytes.Equal(r.Key, ctx.base.Key) {
		flags |= abi.HasKey
	}
	if r.Timestamp != ctx.base.Timestamp {
		flags |= abi.HasTimestamp
	}
	if !sameHeaders(r.Headers, ctx.base.Headers) {
		flags |= abi.HasHeaders
	}
	return flags
}

// Emit passes r on: its key, value, timestamp and headers as they are. It
// copies r.
func (ctx *Context) Emit(r Record) {
	ctx.check()
	ctx.c.out = abi.AppendEntryRecord(ctx.c.out, ctx.index, ctx.differs(&r), &r)
	ctx.c.count++
}

// EmitValue emits value with the current key and timestamp (the last
// record's, or the timer's) and no headers.
func (ctx *Context) EmitValue(value []byte) {
	ctx.Emit(Record{Key: ctx.key, Value: value, Timestamp: ctx.base.Timestamp})
}

// RegisterEventTimer registers a timer for the current key that fires when
// the watermark reaches ts. Registering the same timer twice registers it
// once.
func (ctx *Context) RegisterEventTimer(ts int64) {
	ctx.timers()
	hostTimerRegister(uint32(EventTime), ts)
}

// RegisterProcessingTimer registers a timer for the current key that fires
// when the platform's clock reaches ts.
func (ctx *Context) RegisterProcessingTimer(ts int64) {
	ctx.timers()
	hostTimerRegister(uint32(ProcessingTime), ts)
}

// DeleteEventTimer deletes the current key's event-time timer at ts, if any.
func (ctx *Context) DeleteEventTimer(ts int64) {
	ctx.timers()
	hostTimerDelete(uint32(EventTime), ts)
}

// DeleteProcessingTimer deletes the current key's processing-time timer at
// ts, if any.
func (ctx *Context) DeleteProcessingTimer(ts int64) {
	ctx.timers()
	hostTimerDelete(uint32(ProcessingTime), ts)
}

// keyedCall decodes grouped frames for process and on_timer functions; its
// buffers are reused from call to call.
type keyedCall struct {
	gr    abi.GroupReader
	group abi.GroupHead
	recs  []Record
	ctx   Context
}

// begin starts the output of a grouped frame.
func (k *keyedCall) begin(c *caller, frame []byte) bool {
	if err := k.gr.Reset(frame); err != nil {
		return false
	}
	head := k.gr.Head()
	k.ctx = Context{c: c, wm: head.Watermark, now: head.ProcessingTime, entered: true}
	c.out = abi.AppendInputHeader(c.out[:0], 0)
	c.count = 0
	return true
}

// end finishes the output, or fails the frame when it was malformed.
func (k *keyedCall) end(c *caller) []byte {
	if err := k.gr.Err(); err != nil {
		return c.fail(err.Error())
	}
	abi.SetCount(c.out, c.count)
	return c.out
}

func (k *keyedCall) process(c *caller, f func(*Context, []byte, []Record) error, frame []byte) []byte {
	if !k.begin(c, frame) {
		return c.fail(k.gr.Err().Error())
	}
	var index uint32
	for g := uint32(0); k.gr.NextGroup(&k.group); g++ {
		n := 0
		for {
			if n == len(k.recs) {
				k.recs = append(k.recs, Record{})
			}
			if !k.gr.NextRecord(&k.recs[n]) {
				break
			}
			n++
		}
		if n == 0 {
			continue
		}
		first := index
		index += uint32(n)
		hostEnter(g)
		k.ctx.key, k.ctx.index, k.ctx.base = k.group.Key, index-1, k.recs[n-1]
		mark, marked := len(c.out), c.count
		if err := k.runProcess(f, k.recs[:n]); err != nil {
			c.out, c.count = c.out[:mark], marked
			for i := first; i < index; i++ {
				c.out = abi.AppendEntryError(c.out, i, err.Error())
				c.count++
			}
		}
	}
	return k.end(c)
}

func (k *keyedCall) onTimer(c *caller, f func(*Context, []byte, Timer) error, frame []byte) []byte {
	if !k.begin(c, frame) {
		return c.fail(k.gr.Err().Error())
	}
	for g := uint32(0); k.gr.NextGroup(&k.group); g++ {
		if k.group.Flags&abi.GroupTimer == 0 {
			return c.fail(fmt.Sprintf("udf: on_timer group %d carries no timer", g))
		}
		t := Timer{Timestamp: k.group.TimerTime, Domain: k.group.TimerDomain}
		hostEnter(g)
		k.ctx.key, k.ctx.index = k.group.Key, g
		k.ctx.base = Record{Key: k.group.Key, Timestamp: t.Timestamp}
		mark, marked := len(c.out), c.count
		if err := k.runTimer(f, t); err != nil {
			c.out, c.count = c.out[:mark], marked
			c.out = abi.AppendEntryError(c.out, g, err.Error())
			c.count++
		}
	}
	return k.end(c)
}

// runProcess calls a process function for one group with the context
// active, turning a panic into its error.
func (k *keyedCall) runProcess(f func(*Context, []byte, []Record) error, recs []Record) (err error) {
	k.ctx.active = true
	defer k.recover(&err)
	return f(&k.ctx, k.ctx.key, recs)
}

// runTimer is runProcess for an on_timer function.
func (k *keyedCall) runTimer(f func(*Context, []byte, Timer) error, t Timer) (err error) {
	k.ctx.active = true
	defer k.recover(&err)
	return f(&k.ctx, k.ctx.key, t)
}

// recover ends a user function's call: the context goes inactive and a
// panic becomes the error.
func (k *keyedCall) recover(err *error) {
	k.ctx.active = false
	if p := recover(); p != nil {
		*err = fmt.Errorf("panic: %v", p)
	}
}
