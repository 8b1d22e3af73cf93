package window

import (
	"context"
	"encoding/binary"
	"strconv"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// joinEntryHead is the bytes in front of an encoded record in a window
// join's slot: its side (0 left, 1 right) and the record's length.
const joinEntryHead = 1 + 4

// windowJoinFunc is the window function of a window join: the window
// operator assigns both inputs' records to windows (and handles lateness)
// and this function buffers each record with its side. When a window fires
// it emits the built-in pairs of each key and window, or, with call, calls
// a join function with one two-sided group per key and window having
// records on both sides, or a co_group function with one per key and window.
type windowJoinFunc struct {
	inputs *operator.Inputs
	store  windowContents
	out    *operator.Out
	// call is the join or co_group function; nil for the built-in pairs.
	call    *operator.GroupRunner
	coGroup bool
	policy  *operator.ErrorPolicy
	wm      *int64
	fs      []firing
	head    abi.GroupHead
	// left and right are the values of the window being fired; they
	// alias its slots.
	left, right [][]byte
	scratch     []byte
}

func (f *windowJoinFunc) add(_ context.Context, _ *keyState, s *slot, rec *abi.Record) error {
	s.n++
	b := append(f.scratch[:0], 0, 0, 0, 0, 0)
	if f.inputs.Right {
		b[0] = 1
	}
	b = abi.AppendRecord(b, rec)
	binary.LittleEndian.PutUint32(b[1:], uint32(len(b)-joinEntryHead))
	f.scratch = b
	f.store.appendData(s, b)
	return nil
}

func (f *windowJoinFunc) flush(context.Context) error { return nil }

func (f *windowJoinFunc) merge(_ context.Context, ms []slotMerge) error {
	for _, m := range ms {
		for _, s := range m.from {
			f.store.appendData(m.into, s.data)
			m.into.n += s.n
		}
	}
	return nil
}

// sides splits the records of a window's slots into left and right records,
// calling each with the encoded record.
func joinSides(slots []*slot, each func(right bool, rec []byte)) {
	for _, s := range slots {
		for d := s.data; len(d) > 0; {
			n := int(binary.LittleEndian.Uint32(d[1:]))
			each(d[0] == 1, d[joinEntryHead:joinEntryHead+n])
			d = d[joinEntryHead+n:]
		}
	}
}

// joinValue is the value of an encoded record.
func joinValue(rec []byte) []byte {
	k := int(binary.LittleEndian.Uint32(rec))
	v := int(binary.LittleEndian.Uint32(rec[4+k:]))
	return rec[8+k : 8+k+v]
}

func (f *windowJoinFunc) fire(ctx context.Context, fs []firing) error {
	if f.call != nil {
		return f.fireCall(ctx, fs)
	}
	for i := range fs {
		fr := &fs[i]
		f.left, f.right = f.left[:0], f.right[:0]
		joinSides(fr.slots, func(right bool, rec []byte) {
			if right {
				f.right = append(f.right, joinValue(rec))
			} else {
				f.left = append(f.left, joinValue(rec))
			}
		})
		for _, l := range f.left {
			for _, r := range f.right {
				f.emit(fr, l, r)
				if err := f.out.FlushIfFull(ctx); err != nil {
					return err
				}
			}
		}
	}
	clear(f.left)
	clear(f.right)
	return nil
}

// emit outputs a matched pair of a window: {"key": "...", "window_start": ms,
// "window_end": ms, "left": <left>, "right": <right>} at window_end - 1.
func (f *windowJoinFunc) emit(fr *firing, left, right []byte) {
	b := append(f.scratch[:0], `{"key":`...)
	b = operator.AppendJSONString(b, fr.key)
	b = append(b, `,"window_start":`...)
	b = strconv.AppendInt(b, fr.start, 10)
	b = append(b, `,"window_end":`...)
	b = strconv.AppendInt(b, fr.end, 10)
	b = append(b, `,"left":`...)
	b = append(b, left...)
	b = append(b, `,"right":`...)
	b = append(b, right...)
	b = append(b, '}')
	f.scratch = b
	f.out.Emit(fr.key, b, fr.end-1, nil)
}

// fireCall calls the join or co_group function over the windows that fire.
// A join function is only given windows with records on both sides.
func (f *windowJoinFunc) fireCall(ctx context.Context, fs []firing) error {
	f.fs = f.fs[:0]
	for _, fr := range fs {
		if l, r := joinCounts(fr.slots); f.coGroup || l > 0 && r > 0 {
			f.fs = append(f.fs, fr)
		}
	}
	gc := &f.call.Call
	err := f.call.Run(ctx, abi.OpNone, *f.wm, len(f.fs), operator.GroupHandlers{
		Add: func(i int) {
			fr := &f.fs[i]
			l, r := joinCounts(fr.slots)
			f.head = abi.GroupHead{Flags: abi.GroupWindow | abi.GroupTwoSided, Key: fr.key, WindowStart: fr.start, WindowEnd: fr.end}
			gc.BeginEncoded(&f.head, l)
			joinSides(fr.slots, func(right bool, rec []byte) {
				if !right {
					gc.Frame = append(gc.Frame, rec...)
				}
			})
			gc.Frame = abi.AppendSide(gc.Frame, r)
			gc.Records += r
			joinSides(fr.slots, func(right bool, rec []byte) {
				if right {
					gc.Frame = append(gc.Frame, rec...)
				}
			})
		},
		Record: func(i int, e *abi.Entry) error {
			f.out.EmitEntry(e, f.fs[i].key, f.fs[i].end)
			return nil
		},
		Failed: func(i int, err error) error {
			fr := &f.fs[i]
			return f.policy.RecordFailed(ctx, &abi.Record{Key: fr.key, Timestamp: fr.end - 1}, err)
		},
	})
	clear(f.fs)
	return err
}

// joinCounts counts the left and right records of a window's slots.
func joinCounts(slots []*slot) (left, right uint32) {
	joinSides(slots, func(r bool, _ []byte) {
		if r {
			right++
		} else {
			left++
		}
	})
	return left, right
}

func (f *windowJoinFunc) close(ctx context.Context) error {
	if f.call == nil {
		return nil
	}
	return f.call.Call.Guest.Close(ctx)
}
