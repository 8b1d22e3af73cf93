package udfdev

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
)

// run is one Run: the operator's next stage, which prints what reaches it,
// and its error policy's report of failed records.
type run struct {
	mod    *host.Module
	recs   []abi.Record
	w      *lineWriter
	kind   abi.Kind
	opt    Options
	states []abi.State
	policy *operator.ErrorPolicy
	// prefixes start the errors the operators report for the functions
	// run ("udf[module] function[name]: "), which the output leaves out.
	prefixes []string

	// batch is the batch the operator is processing, of the inputs from
	// number first on; firing is set once the input is over.
	first  int
	batch  []abi.Record
	firing bool
	// inputs are what the records of the next Process call answer.
	inputs []*abi.Record
	// pending are a record function's lines of the batch, written in
	// input order when the batch is done.
	pending []pendingLine
	// passed and failures count the records a watermark function passed on
	// and failed.
	passed, failures int
	// gaps is the window operator of a session_gap function, gapErrors
	// the errors of the batch's records by input.
	gaps      interface{ SessionGaps() []int64 }
	gapErrors map[int]string
	// windowState is a window_process function's state, read as each
	// window's state is cleared.
	windowState []stateEntry
	afterInput  func() error
	// clock is the processing time the operators read, which steps move.
	clock *stepClock
	// broadcasts are the broadcast records given so far, broadcasting is
	// set while one is processed (the batch is then that record), and
	// broadcastInput tells a broadcast_process operator which input the
	// batch is from.
	broadcasts     []abi.Record
	broadcasting   bool
	broadcastInput *operator.Inputs
}

var _ operator.Tracer = (*run)(nil)

// pendingLine is a line of a record function's output for an input.
type pendingLine struct {
	input int
	line  outputLine
}

// prefix starts the errors the operators report for function name.
func (r *run) prefix(name string) string {
	return "udf[" + r.mod.ID + "] function[" + name + "]: "
}

// message is the text of a failed record's error without the prefix that
// names the module and function.
func (r *run) message(cause error) string {
	text := cause.Error()
	for _, p := range r.prefixes {
		if rest, ok := strings.CutPrefix(text, p); ok {
			return rest
		}
	}
	return text
}

// input is the number of the input rec points to, in the current batch.
func (r *run) input(rec *abi.Record) (int, bool) {
	for i := range r.batch {
		if &r.batch[i] == rec {
			return r.first + i, true
		}
	}
	return 0, false
}

func (r *run) Answers(inputs []*abi.Record) { r.inputs = inputs }

func (r *run) Process(_ context.Context, outs []abi.Record) error {
	if r.kind == abi.KindWatermark {
		r.passed += len(outs)
		return nil
	}
	for i := range outs {
		if err := r.output(r.inputs[i], &outs[i]); err != nil {
			return err
		}
	}
	return nil
}

// output writes rec, which answers in.
func (r *run) output(in, rec *abi.Record) error {
	switch {
	case isRecordKind(r.kind):
		n, ok := r.input(in)
		if !ok {
			return fmt.Errorf("an output answers no input of the batch")
		}
		r.pending = append(r.pending, pendingLine{n, recordLine(n, rec)})
		return nil
	case r.kind == abi.KindProcess:
		if n, ok := r.input(in); ok {
			return r.w.write(r.answerLine(n, recordLine(n, rec)))
		}
		line := recordLine(0, rec)
		line.Input, line.Timer = nil, timerOf(in)
		return r.w.write(line)
	case r.kind == abi.KindSessionGap:
		// The built-in count's result: {"key", "window_start",
		// "window_end", "value"}.
		var res struct {
			Start int64 `json:"window_start"`
			End   int64 `json:"window_end"`
			Value int   `json:"value"`
		}
		if err := json.Unmarshal(rec.Value, &res); err != nil {
			return fmt.Errorf("session count %q: %w", rec.Value, err)
		}
		line := outputLine{Window: &windowLine{Start: res.Start, End: res.End}, Records: &res.Value}
		line.Key, line.KeyBase64 = text(rec.Key)
		return r.w.write(line)
	}
	line := recordLine(0, rec)
	line.Input, line.Window = nil, r.windowOf(in.Timestamp+1)
	return r.w.write(line)
}

// answerLine makes line, which answers input n of the batch, name a
// broadcast record instead of a keyed one while one is processed.
func (r *run) answerLine(n int, line outputLine) outputLine {
	if r.broadcasting {
		line.Input, line.Broadcast = nil, &n
	}
	return line
}

// windowOf is the tumbling window ending at end.
func (r *run) windowOf(end int64) *windowLine {
	return &windowLine{Start: end - r.opt.Window.Milliseconds(), End: end}
}

// timerOf renders a fired timer, a record with its key and timestamp.
func timerOf(t *abi.Record) *firedLine {
	fired := &firedLine{Timestamp: t.Timestamp}
	fired.Key, fired.KeyBase64 = text(t.Key)
	return fired
}

// failed is the error policy's report of a failed record: a trap (or any
// failed call) fails the run; the error a function reported for an input
// is written.
func (r *run) failed(_ context.Context, rec *abi.Record, cause error) error {
	var callErr *host.CallError
	if errors.As(cause, &callErr) {
		return cause
	}
	msg := r.message(cause)
	n, isInput := r.input(rec)
	switch {
	case isRecordKind(r.kind) && isInput:
		r.pending = append(r.pending, pendingLine{n, outputLine{Input: &n, Error: &msg}})
		return nil
	case r.kind == abi.KindWatermark && isInput:
		r.failures++
		return r.w.write(outputLine{Input: &n, Error: &msg})
	case r.kind == abi.KindProcess && isInput:
		return r.w.write(r.answerLine(n, outputLine{Input: &n, Error: &msg}))
	case r.kind == abi.KindProcess:
		return r.w.write(outputLine{Timer: timerOf(rec), Error: &msg})
	case r.kind == abi.KindSessionGap && isInput:
		if r.gapErrors == nil {
			r.gapErrors = map[int]string{}
		}
		r.gapErrors[n] = msg
		return nil
	case isWindowKind(r.kind) && !r.firing:
		// An add call failed a window's records: each goes to
		// on_udf_error, in the window its timestamp puts it in.
		size := r.opt.Window.Milliseconds()
		line := recordLine(0, rec)
		line.Input, line.Window, line.Error = nil, r.windowOf(rec.Timestamp-mod(rec.Timestamp, size)+size), &msg
		return r.w.write(line)
	case isWindowKind(r.kind):
		// A window failed: the record is its key and end - 1.
		line := outputLine{Window: r.windowOf(rec.Timestamp + 1), Error: &msg}
		line.Key, line.KeyBase64 = text(rec.Key)
		return r.w.write(line)
	}
	return fmt.Errorf("a %s function failed a record that is not an input: %w", r.kind, cause)
}

// mod is the non-negative remainder of a divided by b.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// endBatch writes what a batch leaves to write once it is processed: a
// record function's lines in input order, a session_gap function's gaps.
func (r *run) endBatch() error {
	switch {
	case isRecordKind(r.kind):
		slices.SortStableFunc(r.pending, func(a, b pendingLine) int { return cmp.Compare(a.input, b.input) })
		for _, p := range r.pending {
			if err := r.w.write(p.line); err != nil {
				return err
			}
		}
		r.pending = r.pending[:0]
	case r.kind == abi.KindSessionGap:
		for i, gap := range r.gaps.SessionGaps() {
			n := r.first + i
			line := outputLine{Input: &n}
			if gap > 0 {
				line.Gap = &gap
			} else {
				msg := r.gapErrors[n]
				line.Error = &msg
			}
			if err := r.w.write(line); err != nil {
				return err
			}
		}
		clear(r.gapErrors)
	}
	return nil
}

// Advance writes the watermarks a watermark function's source emits after
// records; the end of input's is not the function's.
func (r *run) Advance(_ context.Context, wm int64) error {
	if r.kind != abi.KindWatermark || r.firing {
		return nil
	}
	n := r.passed + r.failures - 1
	return r.w.write(outputLine{Input: &n, Watermark: &wm})
}

func (r *run) Tick(context.Context, int64) error { return nil }
func (r *run) Finish(context.Context) error      { return nil }
func (r *run) Close(context.Context) error       { return nil }
