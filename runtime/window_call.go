package runtime

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
)

// windowFrameBytes is about the largest grouped frame a window operator
// sends in one call; a single larger group goes alone.
const windowFrameBytes = 4 << 20

// windowCall runs a grouped window function (aggregate, reduce,
// window_process) over many groups, in frames of at most maxGroups groups
// and about windowFrameBytes. A call's answers take effect only once the
// whole answer has been read and checked, so that after a failed call (a
// trap, a deadline, a malformed answer) the groups can be run again one by
// one to find the failing ones, as on_udf_error skip and dead_letter need.
type windowCall struct {
	kind      abi.Kind
	gc        operator.GroupCall
	maxGroups int
	policy    *operator.ErrorPolicy
	out       *operator.Out
	// state is a stateful window_process function's per-window state,
	// whose groups follow the frame's; nil without state.
	state *windowState

	// The answer of the chunk being read: accumulators copied into arena,
	// and group failures.
	arena    []byte
	accs     []answer
	failures []failure
}

// answer is an accumulator a group answered: arena[off:off+n].
type answer struct {
	group  int
	off, n int
}

// failure is a group the function failed.
type failure struct {
	group int
	err   error
}

// groupHandlers say how to build and take the answers of a run of groups.
type groupHandlers struct {
	// add appends group i to the frame.
	add func(i int)
	// acc takes group i's new accumulator (valid during the call); nil
	// when the function answers records.
	acc func(i int, acc []byte) error
	// record emits a TagRecord entry of group i.
	record func(i int, e *abi.Entry) error
	// failed handles group i failing.
	failed func(i int, err error) error
}

// run calls the function over n groups.
func (w *windowCall) run(ctx context.Context, op abi.Op, wm int64, n int, h groupHandlers) error {
	for lo := 0; lo < n; {
		w.begin(op, wm)
		hi := lo
		for hi < n && (hi == lo || hi-lo < w.maxGroups && len(w.gc.Frame) < windowFrameBytes) {
			h.add(hi)
			hi++
		}
		err := w.chunk(ctx, lo, hi, h)
		if err == nil {
			lo = hi
			continue
		}
		var callErr *host.CallError
		if !errors.As(err, &callErr) {
			return err
		}
		if w.state != nil {
			// The call may have changed state before it failed: running
			// its groups again would apply those changes twice.
			return fmt.Errorf("operator[%s]: %w", w.policy.Vertex, err)
		}
		if w.policy.Mode == operator.OnErrorFail || hi-lo == 1 {
			if hi-lo == 1 && w.policy.Mode != operator.OnErrorFail {
				if err := h.failed(lo, err); err != nil {
					return err
				}
				lo = hi
				continue
			}
			return fmt.Errorf("operator[%s]: %w", w.policy.Vertex, err)
		}
		// Run each group of the failed chunk alone.
		for i := lo; i < hi; i++ {
			w.begin(op, wm)
			h.add(i)
			if err := w.chunk(ctx, i, i+1, h); err != nil {
				if !errors.As(err, &callErr) {
					return err
				}
				if err := h.failed(i, err); err != nil {
					return err
				}
			}
		}
		lo = hi
	}
	return w.out.FlushIfFull(ctx)
}

// begin starts a frame, and its groups' state.
func (w *windowCall) begin(op abi.Op, wm int64) {
	w.gc.Begin(op, wm, operator.NowMillis())
	if w.state != nil {
		w.state.begin()
	}
}

// chunk calls the function over the frame holding groups lo..hi-1 and, if
// the whole answer is good, applies it. Entries come in group order; an
// error entry discards the group's other entries.
func (w *windowCall) chunk(ctx context.Context, lo, hi int, h groupHandlers) error {
	w.arena, w.accs, w.failures = w.arena[:0], w.accs[:0], w.failures[:0]
	mark := w.out.Batch.Len()
	last, groupMark, failed := -1, mark, false
	err := w.gc.Run(ctx, false, func(e *abi.Entry) error {
		i := lo + int(e.Index)
		if i < last {
			return w.gc.BadOutput(fmt.Errorf("entry for group %d after group %d", i-lo, last-lo))
		}
		if i != last {
			last, groupMark, failed = i, w.out.Batch.Len(), false
		} else if h.acc != nil {
			return w.gc.BadOutput(fmt.Errorf("more than one answer for group %d", e.Index))
		}
		switch {
		case failed:
		case e.Tag == abi.TagError:
			w.out.Batch.Truncate(groupMark)
			if n := len(w.accs); n > 0 && w.accs[n-1].group == i {
				w.accs = w.accs[:n-1]
			}
			w.failures = append(w.failures, failure{group: i, err: fmt.Errorf("udf[%s] function[%s]: %s", w.gc.Module, w.gc.Function, e.Message)})
			failed = true
		case e.Tag == abi.TagAccumulator && h.acc != nil:
			w.accs = append(w.accs, answer{group: i, off: len(w.arena), n: len(e.Value)})
			w.arena = append(w.arena, e.Value...)
		case e.Tag == abi.TagRecord && h.record != nil:
			return h.record(i, e)
		default:
			return w.gc.BadOutput(fmt.Errorf("%s function wrote a %s entry", w.kind, operator.TagName(e.Tag)))
		}
		return nil
	})
	if got := len(w.accs) + len(w.failures); err == nil && h.acc != nil && got != hi-lo {
		err = w.gc.BadOutput(fmt.Errorf("%s function answered %d of %d groups", w.kind, got, hi-lo))
	}
	if err != nil {
		w.out.Batch.Truncate(mark)
		return err
	}
	for _, a := range w.accs {
		if err := h.acc(a.group, w.arena[a.off:a.off+a.n]); err != nil {
			return err
		}
	}
	for _, f := range w.failures {
		if err := h.failed(f.group, f.err); err != nil {
			return err
		}
	}
	return nil
}
