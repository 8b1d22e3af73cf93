package window

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/snapenc"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// A window operator's snapshot, little-endian:
//
//	"WSWN" | u8 version 4 | i64 watermark | i64 last tick | u8 triggered
//	| u32 key count | key* | u32 timer count | timer*
//	| u8 state (1: a keyed state snapshot follows, to the end)
//	key:   bytes key | i64 fired | i64 arrived | u32 slot count | slot*
//	slot:  i64 start | i64 end | i64 n | i64 acc count | f64 sum | f64 min | f64 max | u8 has | bytes data
//	       | i64 trigger state | u8 has fire time | bytes custom trigger state
//	timer: u8 domain | i64 timestamp | bytes key | bytes namespace
//
// where bytes is u32 length | bytes. With the default trigger (triggered
// 0) timers are not stored: they follow from the contents and the
// watermark, and are registered again on restore, which also lets contents
// move between subtasks when parallelism changes. Triggered windows
// (triggered.go) store their trigger's state in their slots and their
// timers, per key, so that they move with their key group too. The keyed
// state snapshot (state.Snapshot) holds a window_process function's
// per-window state with the timers that clear it. Version 2 has no
// triggered byte, trigger state or timers (its windows are the default
// trigger's), version 1 no state byte either; version 3 has no custom
// trigger state.
// BlobKind is the kind of a window operator's snapshot blobs.
const BlobKind = "window"

const (
	windowMagic   = "WSWN"
	windowVersion = 4
)

// StateKind is the kind of a window operator's snapshot blobs.
func (w *Operator) StateKind() string { return BlobKind }

// Snapshot encodes the contents on the task goroutine: between batches no
// UDF add is pending. Per-window state is captured there too and written
// afterwards, behind the contents.
func (w *Operator) Snapshot(ctx context.Context) (operator.Blob, error) {
	data := w.encode()
	st := w.state
	if st == nil {
		return operator.Blob{Data: append(data, 0)}, nil
	}
	s, err := st.snapshot(ctx)
	if err != nil {
		return operator.Blob{}, windowStateFail(w.vertex, err)
	}
	data = append(data, 1)
	return operator.Blob{
		Write: func(ctx context.Context, dst io.Writer) error {
			if _, err := dst.Write(data); err != nil {
				return err
			}
			_, err := s.WriteTo(ctx, dst)
			return err
		},
		Release: s.Release,
	}, nil
}

func (w *Operator) encode() []byte {
	b := append([]byte(windowMagic), windowVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(w.wm))
	b = binary.LittleEndian.AppendUint64(b, uint64(w.lastTick))
	b = append(b, boolByte(w.trig != nil))
	store, ok := w.store.(*windowStore)
	if !ok {
		return b
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(store.byKey)))
	for _, ks := range store.byKey {
		b = snapenc.AppendBytes(b, ks.key)
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.fired))
		b = binary.LittleEndian.AppendUint64(b, uint64(ks.arrived))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ks.slots)))
		for _, s := range ks.slots {
			for _, v := range []int64{s.start, s.end, s.n, s.agg.count} {
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
			for _, f := range []float64{s.agg.sum, s.agg.min, s.agg.max} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
			}
			b = snapenc.AppendBytes(append(b, boolByte(s.has)), s.data)
			b = binary.LittleEndian.AppendUint64(b, uint64(s.tstate))
			b = append(b, boolByte(s.hasFire))
			b = snapenc.AppendBytes(b, s.tdata)
		}
	}
	return w.appendTimers(b)
}

// appendTimers appends the timers of triggered windows: none with the
// default trigger, whose timers follow from the contents.
func (w *Operator) appendTimers(b []byte) []byte {
	if w.trig == nil {
		return binary.LittleEndian.AppendUint32(b, 0)
	}
	ev, pt := w.timers.Timers(abi.EventTime), w.timers.Timers(abi.ProcessingTime)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ev)+len(pt)))
	for d, ts := range [][]watermark.Timer{ev, pt} {
		for _, t := range ts {
			b = append(b, byte(d))
			b = binary.LittleEndian.AppendUint64(b, uint64(t.Timestamp))
			b = snapenc.AppendBytes(b, t.Key)
			b = snapenc.AppendBytes(b, t.Namespace)
		}
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// restore loads, before the first batch, the contents of the keys whose key
// groups rng holds (every key for window_all) from snapshots of any
// parallelism, and registers their timers again; and their per-window
// state, when the operator keeps state.
func (w *Operator) Restore(ctx context.Context, srcs []io.Reader, maxP int, rng state.Range) error {
	if len(srcs) == 0 {
		return nil
	}
	var (
		wm, lastTick int64 = math.MinInt64, math.MinInt64
		typ                = w.plan.Type
	)
	decoded := make([]*snapenc.Decoder, 0, len(srcs))
	var states []io.Reader
	for i, src := range srcs {
		data, err := io.ReadAll(src)
		if err != nil {
			return err
		}
		d := &snapenc.Decoder{B: data}
		if string(d.Take(4)) != windowMagic {
			return fmt.Errorf("operator[%s]: window snapshot %d: not a window snapshot", w.vertex, i)
		}
		if d.Version = d.U8(); d.Version < 1 || d.Version > windowVersion {
			return fmt.Errorf("operator[%s]: window snapshot %d: version %d, want 1 to %d", w.vertex, i, d.Version, windowVersion)
		}
		wm, lastTick = max(wm, d.I64()), max(lastTick, d.I64())
		triggered := d.Version >= 3 && d.U8() == 1
		if d.Err == nil && triggered != (w.trig != nil) {
			return fmt.Errorf("operator[%s]: window snapshot %d: %w", w.vertex, i, errTriggerChanged(triggered))
		}
		decoded = append(decoded, d)
	}
	w.wm, w.lastTick = wm, lastTick
	for i, d := range decoded {
		for n := d.U32(); n > 0 && d.Err == nil; n-- {
			key := d.Bytes()
			// fired only keeps a firing from visiting a key twice: a
			// restored key starts without one.
			_, arrived := d.I64(), d.I64()
			keep := w.plan.All || rng.Contains(state.KeyGroup(key, maxP))
			var ks *keyState
			if keep {
				ks = w.store.key(key, true)
				ks.arrived = arrived
			}
			for m := d.U32(); m > 0 && d.Err == nil; m-- {
				start, end, cnt, accCount := d.I64(), d.I64(), d.I64(), d.I64()
				sum, lo, hi := d.F64(), d.F64(), d.F64()
				has, data := d.U8() == 1, d.Bytes()
				var tstate int64
				var hasFire bool
				var tdata []byte
				if d.Version >= 3 {
					tstate, hasFire = d.I64(), d.U8() == 1
				}
				if d.Version >= 4 {
					tdata = d.Bytes()
				}
				if !keep || d.Err != nil {
					continue
				}
				s := w.store.newSlot(start, end)
				s.n, s.agg = cnt, builtinAcc{count: accCount, sum: sum, min: lo, max: hi}
				if has || len(data) > 0 {
					w.store.setData(s, data)
				}
				s.has, s.tstate, s.hasFire = has, tstate, hasFire
				if len(tdata) > 0 {
					w.store.setTriggerState(s, tdata)
				}
				ks.insert(s)
				switch {
				case w.trig != nil:
				case typ == plan.WindowSession:
					w.touched = append(w.touched, touchedSlot{ks: ks, s: s})
				case typ == plan.WindowCount:
				default:
					w.indexPane(start, ks)
				}
			}
		}
		if d.Version >= 3 {
			w.restoreTimers(d, maxP, rng)
		}
		if d.Version >= 2 && d.U8() == 1 && d.Err == nil {
			states = append(states, bytes.NewReader(d.B))
		}
		if d.Err != nil {
			return fmt.Errorf("operator[%s]: window snapshot %d: %w", w.vertex, i, d.Err)
		}
	}
	if typ == plan.WindowSession && w.trig == nil {
		w.sessionTimers()
	}
	// A snapshot's state is dropped when the function keeps none any more,
	// as state.Keyed drops the states a module no longer declares.
	if w.state != nil && len(states) > 0 {
		if err := w.state.restore(ctx, states); err != nil {
			return windowStateFail(w.vertex, err)
		}
	}
	return nil
}

// restoreTimers registers the stored timers of triggered windows whose
// keys are in the subtask's key groups.
func (w *Operator) restoreTimers(d *snapenc.Decoder, maxP int, rng state.Range) {
	for n := d.U32(); n > 0 && d.Err == nil; n-- {
		dom, ts, key, ns := d.U8(), d.I64(), d.Bytes(), d.Bytes()
		switch {
		case d.Err != nil:
		case dom > byte(abi.ProcessingTime) || len(ns) != len(w.ns):
			d.Err = fmt.Errorf("bad timer (domain %d, namespace of %d bytes)", dom, len(ns))
		case w.plan.All || rng.Contains(state.KeyGroup(key, maxP)):
			w.timers.Register(abi.TimeDomain(dom), ts, key, ns)
		}
	}
}

// errTriggerChanged is the error of a snapshot of windows kept for
// another kind of trigger.
func errTriggerChanged(triggered bool) error {
	if triggered {
		return errors.New("its windows were kept for a trigger or an evictor, and the window now has the default trigger: a window's trigger or evictor cannot change across a restore")
	}
	return errors.New("its windows were kept for the default trigger, and the window now has another trigger or an evictor: a window's trigger or evictor cannot change across a restore")
}
