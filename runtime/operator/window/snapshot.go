package window

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"wasmstream.io/platform/internal/snapenc"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// A window operator's snapshot, little-endian:
//
//	"WSWN" | u8 version 2 | i64 watermark | i64 last tick | u32 key count | key*
//	| u8 state (version 2; 1: a keyed state snapshot follows, to the end)
//	key:  bytes key | i64 fired | i64 arrived | u32 slot count | slot*
//	slot: i64 start | i64 end | i64 n | i64 acc count | f64 sum | f64 min | f64 max | u8 has | bytes data
//
// where bytes is u32 length | bytes. Timers are not stored: they follow from
// the contents and the watermark, and are registered again on restore, which
// also lets contents move between subtasks when parallelism changes. The
// keyed state snapshot (state.Snapshot) holds a window_process function's
// per-window state with the timers that clear it. Version 1 has no state
// byte.
// BlobKind is the kind of a window operator's snapshot blobs.
const BlobKind = "window"

const (
	windowMagic   = "WSWN"
	windowVersion = 2
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
			has := byte(0)
			if s.has {
				has = 1
			}
			b = snapenc.AppendBytes(append(b, has), s.data)
		}
	}
	return b
}

// appendLen appends u32 length | b.

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
				if !keep || d.Err != nil {
					continue
				}
				s := w.store.newSlot(start, end)
				s.n, s.agg = cnt, builtinAcc{count: accCount, sum: sum, min: lo, max: hi}
				if has || len(data) > 0 {
					w.store.setData(s, data)
				}
				s.has = has
				ks.insert(s)
				switch typ {
				case plan.WindowSession:
					w.touched = append(w.touched, touchedSlot{ks: ks, s: s})
				case plan.WindowCount:
				default:
					w.indexPane(start, ks)
				}
			}
		}
		if d.Version >= 2 && d.U8() == 1 && d.Err == nil {
			states = append(states, bytes.NewReader(d.B))
		}
		if d.Err != nil {
			return fmt.Errorf("operator[%s]: window snapshot %d: %w", w.vertex, i, d.Err)
		}
	}
	if typ == plan.WindowSession {
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
