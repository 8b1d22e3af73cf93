package window

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// udfAccFunc is a UDF aggregate (create/add, merge, result) or reduce (the
// accumulator is the reduced value, emitted as the result's value). The host
// keeps each slot's accumulator bytes; add queues records and flush folds
// every queued slot in one call.
type udfAccFunc struct {
	reduce bool
	call   *operator.GroupRunner
	store  windowContents
	out    *operator.Out
	policy *operator.ErrorPolicy
	// wm is the operator's watermark, sent in frames.
	wm *int64

	touched []touchedSlot
	// groups are the windows or merges being computed; their accumulators
	// live in arena.
	groups []accGroup
	arena  []byte
	pairs  []accPair
}

type touchedSlot struct {
	ks *keyState
	s  *slot
}

// accGroup is one window (or session merge) whose slot accumulators are
// being merged into one.
type accGroup struct {
	key        []byte
	start, end int64
	into       *slot
	accs       []span
	failed     bool
	// odd and last keep a round's unpaired accumulator.
	odd  bool
	last span
}

// span is arena[off:off+n].
type span struct{ off, n int }

// accPair is one merge of a round: group g's accumulators a and b.
type accPair struct {
	g    int
	a, b span
}

func (f *udfAccFunc) add(_ context.Context, ks *keyState, s *slot, rec *abi.Record) error {
	s.n++
	if len(s.pending) == 0 {
		f.touched = append(f.touched, touchedSlot{ks: ks, s: s})
	}
	s.pending = append(s.pending, *rec)
	return nil
}

func (f *udfAccFunc) flush(ctx context.Context) error {
	if len(f.touched) == 0 {
		return nil
	}
	var head abi.GroupHead
	err := f.call.Run(ctx, abi.OpAdd, *f.wm, len(f.touched), operator.GroupHandlers{
		Add: func(i int) {
			t := f.touched[i]
			head = abi.GroupHead{Key: t.ks.key}
			if t.s.has {
				head.Flags, head.Acc = abi.GroupAcc, t.s.data
			}
			f.call.Call.Add(&head, t.s.pending)
		},
		Acc: func(i int, acc []byte) error {
			s := f.touched[i].s
			f.store.setData(s, acc)
			s.has = true
			return nil
		},
		Failed: func(i int, err error) error {
			s := f.touched[i].s
			for j := range s.pending {
				if err := f.policy.RecordFailed(ctx, &s.pending[j], err); err != nil {
					return err
				}
			}
			return nil
		},
	})
	for _, t := range f.touched {
		clear(t.s.pending)
		t.s.pending = t.s.pending[:0]
	}
	clear(f.touched)
	f.touched = f.touched[:0]
	return err
}

// gather starts a group over the accumulators of slots.
func (f *udfAccFunc) gather(key []byte, start, end int64, into *slot, slots []*slot) {
	g := accGroup{key: key, start: start, end: end, into: into}
	for _, s := range slots {
		if s.has {
			g.accs = append(g.accs, span{off: len(f.arena), n: len(s.data)})
			f.arena = append(f.arena, s.data...)
		}
	}
	f.groups = append(f.groups, g)
}

// mergeGroups merges each group's accumulators into one, in rounds of
// pairwise merges, one call per round for all groups.
func (f *udfAccFunc) mergeGroups(ctx context.Context) error {
	for {
		f.pairs = f.pairs[:0]
		for gi := range f.groups {
			g := &f.groups[gi]
			if g.failed {
				continue
			}
			for k := 0; k+1 < len(g.accs); k += 2 {
				f.pairs = append(f.pairs, accPair{g: gi, a: g.accs[k], b: g.accs[k+1]})
			}
		}
		if len(f.pairs) == 0 {
			return nil
		}
		// Each group receives the merges of its pairs, in order, then its
		// odd accumulator, if any, last: the order of accumulators is kept.
		for gi := range f.groups {
			g := &f.groups[gi]
			g.odd = len(g.accs)%2 == 1
			if g.odd {
				g.last = g.accs[len(g.accs)-1]
			}
			g.accs = g.accs[:0]
		}
		var head abi.GroupHead
		err := f.call.Run(ctx, abi.OpMerge, *f.wm, len(f.pairs), operator.GroupHandlers{
			Add: func(i int) {
				p := f.pairs[i]
				head = abi.GroupHead{Flags: abi.GroupAcc | abi.GroupAcc2, Key: f.groups[p.g].key,
					Acc: f.arena[p.a.off : p.a.off+p.a.n], Acc2: f.arena[p.b.off : p.b.off+p.b.n]}
				f.call.Call.Add(&head, nil)
			},
			Acc: func(i int, acc []byte) error {
				g := &f.groups[f.pairs[i].g]
				g.accs = append(g.accs, span{off: len(f.arena), n: len(acc)})
				f.arena = append(f.arena, acc...)
				return nil
			},
			Failed: func(i int, err error) error {
				g := &f.groups[f.pairs[i].g]
				if g.failed {
					return nil
				}
				g.failed = true
				return f.policy.RecordFailed(ctx, &abi.Record{Key: g.key, Timestamp: g.end - 1}, err)
			},
		})
		if err != nil {
			return err
		}
		for gi := range f.groups {
			if g := &f.groups[gi]; g.odd {
				g.accs = append(g.accs, g.last)
			}
		}
	}
}

func (f *udfAccFunc) reset() {
	clear(f.groups)
	f.groups = f.groups[:0]
	f.arena = f.arena[:0]
}

func (f *udfAccFunc) merge(ctx context.Context, ms []slotMerge) error {
	defer f.reset()
	for _, m := range ms {
		f.gather(m.key, m.into.start, m.into.end, m.into, append([]*slot{m.into}, m.from...))
		for _, s := range m.from {
			m.into.n += s.n
		}
	}
	if err := f.mergeGroups(ctx); err != nil {
		return err
	}
	for i := range f.groups {
		g := &f.groups[i]
		if !g.failed && len(g.accs) == 1 {
			a := g.accs[0]
			f.store.setData(g.into, f.arena[a.off:a.off+a.n])
			g.into.has = true
		}
	}
	return nil
}

func (f *udfAccFunc) fire(ctx context.Context, fs []firing) error {
	defer f.reset()
	for i := range fs {
		f.gather(fs[i].key, fs[i].start, fs[i].end, nil, fs[i].slots)
	}
	if err := f.mergeGroups(ctx); err != nil {
		return err
	}
	if f.reduce {
		for i := range f.groups {
			g := &f.groups[i]
			if !g.failed && len(g.accs) == 1 {
				a := g.accs[0]
				f.out.Emit(g.key, f.arena[a.off:a.off+a.n], g.end-1, nil)
			}
		}
		return f.out.FlushIfFull(ctx)
	}
	// Groups without an accumulator (every add failed) have no result.
	live := f.groups[:0]
	for _, g := range f.groups {
		if !g.failed && len(g.accs) == 1 {
			live = append(live, g)
		}
	}
	f.groups = live
	var head abi.GroupHead
	return f.call.Run(ctx, abi.OpResult, *f.wm, len(f.groups), operator.GroupHandlers{
		Add: func(i int) {
			g := &f.groups[i]
			a := g.accs[0]
			head = abi.GroupHead{Flags: abi.GroupWindow | abi.GroupAcc, Key: g.key, WindowStart: g.start, WindowEnd: g.end,
				Acc: f.arena[a.off : a.off+a.n]}
			f.call.Call.Add(&head, nil)
		},
		Record: func(i int, e *abi.Entry) error {
			f.out.EmitEntry(e, f.groups[i].key, f.groups[i].end)
			return nil
		},
		Failed: func(i int, err error) error {
			g := &f.groups[i]
			return f.policy.RecordFailed(ctx, &abi.Record{Key: g.key, Timestamp: g.end - 1}, err)
		},
	})
}

func (f *udfAccFunc) close(ctx context.Context) error { return f.call.Call.Guest.Close(ctx) }

// udfProcessFunc is a UDF window process function: the host buffers each
// slot's records (encoded once, in the frame layout) and a firing sends every
// window's records in one call. With state, each group's calls to the state
// imports act on its key's and window's state.
type udfProcessFunc struct {
	call   *operator.GroupRunner
	store  windowContents
	out    *operator.Out
	policy *operator.ErrorPolicy
	wm     *int64
	// state is the per-window state; nil when the module declares none.
	state *windowState

	scratch []byte
	fs      []firing
}

func (f *udfProcessFunc) add(_ context.Context, _ *keyState, s *slot, rec *abi.Record) error {
	s.n++
	f.scratch = abi.AppendRecord(f.scratch[:0], rec)
	f.store.appendData(s, f.scratch)
	return nil
}

func (f *udfProcessFunc) flush(context.Context) error { return nil }

func (f *udfProcessFunc) merge(_ context.Context, ms []slotMerge) error {
	for _, m := range ms {
		for _, s := range m.from {
			f.store.appendData(m.into, s.data)
			m.into.n += s.n
		}
	}
	return nil
}

func (f *udfProcessFunc) fire(ctx context.Context, fs []firing) error {
	f.fs = fs
	if f.state != nil {
		f.state.prepare(fs)
	}
	var head abi.GroupHead
	err := f.call.Run(ctx, abi.OpNone, *f.wm, len(fs), operator.GroupHandlers{
		Add: func(i int) {
			fr := &f.fs[i]
			if f.state != nil {
				f.state.add(i, fr)
			}
			head = abi.GroupHead{Flags: abi.GroupWindow, Key: fr.key, WindowStart: fr.start, WindowEnd: fr.end}
			var n int64
			for _, s := range fr.slots {
				n += s.n
			}
			f.call.Call.BeginEncoded(&head, uint32(n))
			for _, s := range fr.slots {
				f.call.Call.Frame = append(f.call.Call.Frame, s.data...)
			}
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
	f.fs = nil
	return err
}

func (f *udfProcessFunc) close(ctx context.Context) error { return f.call.Call.Guest.Close(ctx) }
