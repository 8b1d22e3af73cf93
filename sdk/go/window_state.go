package udf

import "wasmstream.io/platform/abi"

// ProcessWindowWithState registers a window process function (kind
// window_process) with per-window state, as Flink's ProcessWindowFunction
// with its context's windowState(): it is called once per window that fires
// (again when a record late within the allowed lateness re-fires it), with
// the window's key, bounds and records, and the states it declares (with
// ValueState, ListState, MapState) act on that key's state in that window.
// The platform clears a window's state when it drops the window, at its end
// plus the allowed lateness. ctx.Emit emits a record as it is and
// ctx.EmitValue one with the window's key and timestamp End - 1. A window
// process function has no timers: the timer methods of ctx panic.
//
// If f returns an error or panics, what it emitted for the window is
// discarded; the state it changed stays changed. Per-window state needs
// tumbling or sliding windows: the platform refuses a job that runs such a
// function over session or count windows.
func ProcessWindowWithState(name string, f func(ctx *Context, key []byte, w Window, recs []Record) error) {
	mustFunc(name, f == nil)
	functions.add(function{name: name, kind: abi.KindWindowProcess, run: func(c *caller, frame []byte) []byte {
		return c.window.processWithState(c, f, frame)
	}})
}

func (w *windowCall) processWithState(c *caller, f func(*Context, []byte, Window, []Record) error, frame []byte) []byte {
	if err := w.begin(c, frame); err != nil {
		return c.fail(err.Error())
	}
	head := w.gr.Head()
	w.each(c, func(g uint32) error {
		n := w.readRecords()
		win := Window{Start: w.group.WindowStart, End: w.group.WindowEnd}
		w.ctx = Context{c: c, active: true, key: w.group.Key, wm: head.Watermark, now: head.ProcessingTime,
			index: g, base: Record{Key: w.group.Key, Timestamp: win.End - 1}, window: true, group: g}
		err := f(&w.ctx, w.group.Key, win, w.recs[:n])
		w.ctx.active = false
		return err
	})
	return w.end(c)
}
