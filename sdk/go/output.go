package udf

import (
	"wasmstream.io/platform/abi"
)

// Output emits r on the side output tag (Flink's ctx.output(tag, value)):
// the job routes it by the operator's side_outputs to whatever reads
// "operator.tag". It inherits what Emit's records inherit: fields equal to
// the current input's are left to the platform, so a side record carries
// the event time of the record (or timer) that caused it unless r sets
// another. A tag the operator does not declare fails the input under the
// job's on_udf_error. It copies r.
func (ctx *Context) Output(tag string, r Record) {
	ctx.check()
	ctx.c.out = abi.AppendEntryOutput(ctx.c.out, ctx.index, tag, ctx.differs(&r), &r)
	ctx.c.count++
}

// OutputValue emits value on the side output tag with the current key and
// timestamp and no headers, as EmitValue does on the main output.
func (ctx *Context) OutputValue(tag string, value []byte) {
	ctx.Output(tag, Record{Key: ctx.key, Value: value, Timestamp: ctx.base.Timestamp})
}

// sideTo is the caller whose window process, join or co_group function is
// running, for SideOutput; a module runs one call at a time.
var sideTo *caller

// SideOutput emits r on the side output tag from a window process, join or
// co_group function, whose emit has no context (keyed functions and
// ProcessWindowWithState use ctx.Output). r inherits as emit's records do:
// an empty Key the group's key, Timestamp 0 the window's End - 1 (for an
// interval join, the later of the pair's timestamps). It panics outside
// such a function's call.
func SideOutput(tag string, r Record) {
	c := sideTo
	if c == nil || !c.window.emitting {
		panic("udf: SideOutput called outside a window process, join or co_group function")
	}
	w := &c.window
	flags := w.flagsOf(&r)
	c.out = abi.AppendEntryOutput(c.out, w.index, tag, flags, &r)
	c.count++
}
