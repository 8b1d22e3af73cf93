package window

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/state"
)

// FuzzWindowSnapshot: a window operator's snapshot, as a checkpoint holds
// it, never makes Restore panic; it fails naming the operator, and what it
// restores snapshots again to what restores the same.
func FuzzWindowSnapshot(f *testing.F) {
	plans := []plan.Window{
		{Type: plan.WindowTumbling, Size: 10, Slide: 10, Builtin: builtinCount},
		{Type: plan.WindowSession, Gap: 5, Builtin: builtinCount},
		tumbling(10, 0, plan.Trigger{Type: plan.TriggerContinuousEventTime, Interval: 3}),
	}
	ctx := context.Background()
	for _, wp := range plans {
		w, _ := testWindow(&wp, nil, &optest.Tape{}, nil)
		for _, st := range []optest.Step{"a@3 {}; b@12 {}; a@1 {}", "wm 5", "c@30 {}"} {
			if err := st.Apply(ctx, w); err != nil {
				f.Fatal(err)
			}
		}
		if w.trig != nil {
			// A custom trigger's state, as version 4 keeps it.
			ks := w.store.key([]byte("a"), false)
			w.store.setTriggerState(ks.slots[0], []byte("custom state"))
		}
		seed := append(w.encode(), 0)
		f.Add(uint8(0), seed)
		f.Add(uint8(1), seed)
		f.Add(uint8(0), seed[:len(seed)/2])
	}
	f.Add(uint8(0), []byte(windowMagic))
	f.Add(uint8(0), append([]byte(windowMagic), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		wp := plans[int(which)%len(plans)]
		w, _ := testWindow(&wp, nil, &optest.Tape{}, nil)
		rng := state.RangeOf(128, 1, 0)
		if err := w.Restore(ctx, []io.Reader{bytes.NewReader(data)}, 128, rng); err != nil {
			if !strings.HasPrefix(err.Error(), "operator[win]: ") {
				t.Fatalf("error without the operator: %v", err)
			}
			return
		}
		again := append(w.encode(), 0)
		w2, _ := testWindow(&wp, nil, &optest.Tape{}, nil)
		if err := w2.Restore(ctx, []io.Reader{bytes.NewReader(again)}, 128, rng); err != nil {
			t.Fatalf("restore of a re-encoded snapshot: %v", err)
		}
		if w2.wm != w.wm || w2.lastTick != w.lastTick {
			t.Fatalf("re-encoded snapshot differs: watermark %d/%d, tick %d/%d", w2.wm, w.wm, w2.lastTick, w.lastTick)
		}
	})
}
