package operator

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
)

// frameBytes is about the largest grouped frame a GroupRunner sends in one
// call; a single larger group goes alone.
const frameBytes = 4 << 20

// GroupRunner runs a grouped function (aggregate, reduce, window_process,
// join, co_group) over many groups, in frames of at most MaxGroups groups
// and about frameBytes. A call's answers take effect only once the
// whole answer has been read and checked, so that after a failed call (a
// trap, a deadline, a malformed answer) the groups can be run again one by
// one to find the failing ones, as on_udf_error skip and dead_letter need.
type GroupRunner struct {
	Kind      abi.Kind
	Call      GroupCall
	MaxGroups int
	Policy    *ErrorPolicy
	Out       *Out
	// State is the keyed state a stateful function's calls change, its
	// groups following the frame's; nil without state. A failed call is
	// then never run again: it may have changed state before it failed.
	State FrameState
	// Clock is the processing time frames carry; nil means NowMillis.
	Clock func() int64

	// The answer of the chunk being read: accumulators copied into arena,
	// and group failures.
	arena    []byte
	accs     []accAnswer
	reader   Answer
	failures []failure
}

// FrameState is keyed state whose groups follow a frame's: Begin starts a
// frame.
type FrameState interface {
	Begin()
}

// accAnswer is an accumulator a group answered: arena[off:off+n].
type accAnswer struct {
	group  int
	off, n int
}

// failure is a group the function failed.
type failure struct {
	group int
	err   error
}

// GroupHandlers say how to build and take the answers of a run of groups.
type GroupHandlers struct {
	// Add appends group i to the frame.
	Add func(i int)
	// Acc takes group i's new accumulator (valid during the call); nil
	// when the function answers records.
	Acc func(i int, acc []byte) error
	// Record emits a TagRecord entry of group i.
	Record func(i int, e *abi.Entry) error
	// Failed handles group i failing.
	Failed func(i int, err error) error
}

// Run calls the function over n groups.
func (w *GroupRunner) Run(ctx context.Context, op abi.Op, wm int64, n int, h GroupHandlers) error {
	for lo := 0; lo < n; {
		w.begin(op, wm)
		hi := lo
		for hi < n && (hi == lo || hi-lo < w.MaxGroups && len(w.Call.Frame) < frameBytes) {
			h.Add(hi)
			hi++
		}
		if err := w.runChunk(ctx, op, wm, lo, hi, h); err != nil {
			return err
		}
		lo = hi
	}
	return w.Out.FlushIfFull(ctx)
}

// runChunk calls the function over groups lo..hi-1, whose frame is built,
// and narrows a failed call down to its failing groups (ErrorPolicy.Isolate)
// unless the function keeps state.
func (w *GroupRunner) runChunk(ctx context.Context, op abi.Op, wm int64, lo, hi int, h GroupHandlers) error {
	if w.State != nil {
		err := w.chunk(ctx, lo, hi, h)
		if err != nil && failedCall(err) {
			// The call may have changed state before it failed: running
			// its groups again would apply those changes twice.
			return fmt.Errorf("operator[%s]: %w", w.Policy.Vertex, err)
		}
		return err
	}
	built := true
	return w.Policy.Isolate(lo, hi,
		func(a, b int) error {
			if !built {
				w.begin(op, wm)
				for k := a; k < b; k++ {
					h.Add(k)
				}
			}
			built = false
			return w.chunk(ctx, a, b, h)
		},
		func(i int, err error) error {
			if w.Policy.Mode == OnErrorFail {
				return fmt.Errorf("operator[%s]: %w", w.Policy.Vertex, err)
			}
			return h.Failed(i, err)
		})
}

// begin starts a frame, and its groups' state.
func (w *GroupRunner) begin(op abi.Op, wm int64) {
	now := w.Clock
	if now == nil {
		now = NowMillis
	}
	w.Call.Begin(op, wm, now())
	if w.State != nil {
		w.State.Begin()
	}
}

// chunk calls the function over the frame holding groups lo..hi-1 and, if
// the whole answer is good, applies it. Entries come in group order; an
// error entry discards the group's other entries.
func (w *GroupRunner) chunk(ctx context.Context, lo, hi int, h GroupHandlers) error {
	w.arena, w.accs, w.failures = w.arena[:0], w.accs[:0], w.failures[:0]
	mark := w.Out.Batch.Len()
	groupMark := mark
	sides := w.Out.Sides
	sides.MarkCall()
	w.reader.Reset("group")
	err := w.Call.Run(ctx, false, func(e *abi.Entry) error {
		first, verdict, err := w.reader.Next(e)
		if err != nil {
			return w.Call.BadOutput(err)
		}
		i := lo + int(e.Index)
		if first {
			groupMark = w.Out.Batch.Len()
			sides.MarkInput()
		} else if h.Acc != nil {
			return w.Call.BadOutput(fmt.Errorf("more than one answer for group %d", e.Index))
		}
		fail := func(msg any) {
			w.Out.Batch.Truncate(groupMark)
			sides.DropInput()
			if n := len(w.accs); n > 0 && w.accs[n-1].group == i {
				w.accs = w.accs[:n-1]
			}
			w.failures = append(w.failures, failure{group: i, err: fmt.Errorf("udf[%s] function[%s]: %s", w.Call.Module, w.Call.Function, msg)})
		}
		switch {
		case verdict == Skip:
		case verdict == Fail:
			fail(e.Message)
		case e.Tag == abi.TagOutput && h.Record != nil && w.Kind != abi.KindAggregate && sides.Find(e.Output) < 0:
			w.reader.FailInput()
			fail(sides.Undeclared(e.Output))
		case e.Tag == abi.TagOutput && h.Record != nil && w.Kind != abi.KindAggregate:
			return h.Record(i, e)
		case e.Tag == abi.TagAccumulator && h.Acc != nil:
			w.accs = append(w.accs, accAnswer{group: i, off: len(w.arena), n: len(e.Value)})
			w.arena = append(w.arena, e.Value...)
		case e.Tag == abi.TagRecord && h.Record != nil:
			return h.Record(i, e)
		default:
			return w.Call.BadOutput(fmt.Errorf("%s function wrote a %s entry", w.Kind, TagName(e.Tag)))
		}
		return nil
	})
	if got := len(w.accs) + len(w.failures); err == nil && h.Acc != nil && got != hi-lo {
		err = w.Call.BadOutput(fmt.Errorf("%s function answered %d of %d groups", w.Kind, got, hi-lo))
	}
	if err != nil {
		w.Out.Batch.Truncate(mark)
		sides.DropCall()
		return err
	}
	for _, a := range w.accs {
		if err := h.Acc(a.group, w.arena[a.off:a.off+a.n]); err != nil {
			return err
		}
	}
	for _, f := range w.failures {
		if err := h.Failed(f.group, f.err); err != nil {
			return err
		}
	}
	return nil
}
