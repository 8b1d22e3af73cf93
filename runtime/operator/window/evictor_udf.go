package window

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// A custom evictor is a function of kind evictor (abi/evictor.go): one call
// gets every window that fires, each as a group of its records, and
// answers each with a keep bitmap. The bitmaps of a run are all checked
// and kept aside before any is applied, so that a call the error policy
// runs again group by group never evicts twice.
//
// A window the evictor fails (an error entry, a trap narrowed down to it, a
// bad bitmap) goes through on_udf_error as a window function's failure
// does, as the record (key, end − 1), and keeps its records; before the
// window function, it does not fire this time. A window left without
// records before the window function does not fire either: a window
// function is never called without records.

// keepAnswer is a window's keep bitmap: e.bitmaps[off:off+n].
type keepAnswer struct {
	firing int
	off, n int
}

// runCustom runs the custom evictor at op over the windows that fire.
func (e *evictor) runCustom(ctx context.Context, w *Operator, op abi.Op) error {
	e.bitmaps, e.answers = e.bitmaps[:0], e.answers[:0]
	if cap(e.skip) < len(w.fs) {
		e.skip = make([]bool, len(w.fs))
	}
	e.skip = e.skip[:len(w.fs)]
	clear(e.skip)
	g := e.custom
	var head abi.GroupHead
	fail := func(i int, err error) error {
		f := &w.fs[i]
		e.skip[i] = true
		return w.policy.RecordFailed(ctx, &abi.Record{Key: f.key, Timestamp: f.end - 1}, err)
	}
	err := g.Run(ctx, op, w.wm, len(w.fs), operator.GroupHandlers{
		Add: func(i int) {
			f := &w.fs[i]
			s := f.slots[0]
			head = abi.GroupHead{Flags: abi.GroupWindow, Key: f.key, WindowStart: f.start, WindowEnd: f.end}
			g.Call.BeginEncoded(&head, uint32(s.n))
			g.Call.Frame = append(g.Call.Frame, s.data...)
		},
		Acc: func(i int, bitmap []byte) error {
			if err := abi.CheckKeepBitmap(bitmap, int(w.fs[i].slots[0].n)); err != nil {
				return fail(i, fmt.Errorf("udf[%s] function[%s]: window [%d, %d): %w", g.Call.Module, g.Call.Function, w.fs[i].start, w.fs[i].end, err))
			}
			e.answers = append(e.answers, keepAnswer{firing: i, off: len(e.bitmaps), n: len(bitmap)})
			e.bitmaps = append(e.bitmaps, bitmap...)
			return nil
		},
		Failed: fail,
	})
	if err != nil {
		return err
	}
	for _, a := range e.answers {
		f := &w.fs[a.firing]
		s := f.slots[0]
		bitmap := e.bitmaps[a.off : a.off+a.n]
		if err := e.retain(w, s, func(i, _ int64) bool { return abi.Keeps(bitmap, int(i)) }); err != nil {
			return fmt.Errorf("operator[%s]: evictor: %w", w.vertex, err)
		}
		f.start, f.end = s.start, s.end
		if s.n == 0 {
			e.skip[a.firing] = true
		}
	}
	if op == abi.OpEvictBefore {
		kept := w.fs[:0]
		for i, f := range w.fs {
			if !e.skip[i] {
				kept = append(kept, f)
			}
		}
		clear(w.fs[len(kept):])
		w.fs = kept
	}
	return nil
}
