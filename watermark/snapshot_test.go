package watermark

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
)

// marks is an Output that writes down the watermarks reaching it.
type marks struct{ lines []string }

func (m *marks) Process(context.Context, []abi.Record) error { return nil }
func (m *marks) Advance(_ context.Context, wm int64) error {
	m.lines = append(m.lines, fmt.Sprintf("wm %d", wm))
	return nil
}
func (m *marks) Tick(context.Context, int64) error { return nil }
func (m *marks) Finish(context.Context) error      { return nil }
func (m *marks) Close(context.Context) error       { return nil }

// wmHarness is a watermark generator over named splits with a settable
// clock, recording what it emits and announces.
type wmHarness struct {
	g         *Generator
	out       *marks
	now       int64
	announced []bool
}

func newWMHarness(mode Mode, delay, interval, idleAfter int64, names ...string) *wmHarness {
	h := &wmHarness{out: &marks{}, now: 1000}
	h.g = NewGenerator(mode, delay, interval, idleAfter, func(_ context.Context, idle bool) error {
		h.announced = append(h.announced, idle)
		return nil
	}, h.out)
	h.g.Clock = func() int64 { return h.now }
	h.g.SetSplits(len(names))
	h.g.Names = names
	return h
}

// feed processes records of split k at the given timestamps.
func (h *wmHarness) feed(t *testing.T, k int, ts ...int64) {
	t.Helper()
	h.g.Split = k
	recs := make([]abi.Record, len(ts))
	for i := range ts {
		recs[i] = abi.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: ts[i]}
	}
	if err := h.g.Process(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

func (h *wmHarness) tick(t *testing.T, after int64) {
	t.Helper()
	h.now += after
	if err := h.g.Tick(context.Background(), h.now); err != nil {
		t.Fatal(err)
	}
}

// watermarks are the watermark lines the generator emitted.
func (h *wmHarness) watermarks() []string {
	return slices.Clone(h.out.lines)
}

// TestWatermarkGeneratorRestore checkpoints generators and restores them
// into new ones: the first watermark after the restore is not below the last
// one emitted before it, later records do not lower it, and idle splits are
// idle again.
func TestWatermarkGeneratorRestore(t *testing.T) {
	type snap struct {
		subtask int
		h       *wmHarness
	}
	tests := []struct {
		name string
		// before builds the checkpointed generators; after is the new one.
		before      func(t *testing.T) []snap
		after       func() *wmHarness
		subtask, p  int
		then        func(t *testing.T, h *wmHarness)
		want        []string
		wantAnnounc []bool
	}{
		{
			name: "bounded: the lowest split holds the watermark, not below it after",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Bounded, 10, 0, 0, "a", "b")
				h.feed(t, 0, 100)
				h.feed(t, 1, 50)
				return []snap{{0, h}}
			},
			after: func() *wmHarness { return newWMHarness(Bounded, 10, 0, 0, "a", "b") },
			p:     1,
			then: func(t *testing.T, h *wmHarness) {
				h.tick(t, 1)
				h.feed(t, 1, 45)
				h.feed(t, 1, 70)
			},
			want: []string{"wm 39", "wm 59"},
		},
		{
			name: "periodic bounded: the first periodic watermark is the restored one",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Bounded, 0, 200, 0, "a")
				h.feed(t, 0, 300)
				h.tick(t, 1)
				h.feed(t, 0, 400)
				return []snap{{0, h}}
			},
			after: func() *wmHarness { return newWMHarness(Bounded, 0, 200, 0, "a") },
			p:     1,
			then: func(t *testing.T, h *wmHarness) {
				h.feed(t, 0, 350)
				h.tick(t, 1)
			},
			want: []string{"wm 399"},
		},
		{
			name: "an idle split stays idle until its next record",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Bounded, 0, 0, 100, "a", "b")
				h.feed(t, 0, 500)
				h.feed(t, 1, 200)
				h.tick(t, 50)
				h.feed(t, 0, 600)
				h.tick(t, 60)
				return []snap{{0, h}}
			},
			after: func() *wmHarness { return newWMHarness(Bounded, 0, 0, 100, "a", "b") },
			p:     1,
			then: func(t *testing.T, h *wmHarness) {
				h.tick(t, 1)
				h.feed(t, 1, 300)
			},
			want: []string{"wm 599"},
		},
		{
			name: "every split idle: the first tick announces the subtask idle",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Bounded, 0, 0, 100, "a")
				h.feed(t, 0, 500)
				h.tick(t, 100)
				return []snap{{0, h}}
			},
			after: func() *wmHarness { return newWMHarness(Bounded, 0, 0, 100, "a") },
			p:     1,
			then: func(t *testing.T, h *wmHarness) {
				h.tick(t, 1)
				h.feed(t, 0, 501)
			},
			want:        []string{"wm 499", "wm 500"},
			wantAnnounc: []bool{true, false},
		},
		{
			name: "punctuated: the function's last watermark per split",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Punctuated, 0, 0, 0, "a", "b")
				h.g.Split = 0
				if err := h.g.Punctuation(context.Background(), 800); err != nil {
					t.Fatal(err)
				}
				h.g.Split = 1
				if err := h.g.Punctuation(context.Background(), 700); err != nil {
					t.Fatal(err)
				}
				return []snap{{0, h}}
			},
			after: func() *wmHarness { return newWMHarness(Punctuated, 0, 0, 0, "a", "b") },
			p:     1,
			then: func(t *testing.T, h *wmHarness) {
				h.tick(t, 1)
				h.g.Split = 1
				if err := h.g.Punctuation(context.Background(), 650); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"wm 700"},
		},
		{
			name: "subject filters move between subtasks by name",
			before: func(t *testing.T) []snap {
				h := newWMHarness(Bounded, 0, 0, 0, "s.0", "s.1", "s.2")
				h.feed(t, 0, 100)
				h.feed(t, 1, 200)
				h.feed(t, 2, 300)
				return []snap{{0, h}}
			},
			after:   func() *wmHarness { return newWMHarness(Bounded, 0, 0, 0, "s.1") },
			subtask: 1, p: 2,
			then: func(t *testing.T, h *wmHarness) { h.tick(t, 1) },
			want: []string{"wm 199"},
		},
		{
			name: "an unnamed split at the same parallelism is the subtask's own",
			before: func(t *testing.T) []snap {
				h0 := newWMHarness(Bounded, 0, 0, 0, "")
				h0.feed(t, 0, 100)
				h1 := newWMHarness(Bounded, 0, 0, 0, "")
				h1.feed(t, 0, 200)
				return []snap{{0, h0}, {1, h1}}
			},
			after:   func() *wmHarness { return newWMHarness(Bounded, 0, 0, 0, "") },
			subtask: 1, p: 2,
			then: func(t *testing.T, h *wmHarness) { h.tick(t, 1) },
			want: []string{"wm 199"},
		},
		{
			name: "an unnamed split at another parallelism takes the lowest",
			before: func(t *testing.T) []snap {
				h0 := newWMHarness(Bounded, 0, 0, 0, "")
				h0.feed(t, 0, 100)
				h1 := newWMHarness(Bounded, 0, 0, 0, "")
				h1.feed(t, 0, 200)
				return []snap{{0, h0}, {1, h1}}
			},
			after:   func() *wmHarness { return newWMHarness(Bounded, 0, 0, 0, "") },
			subtask: 2, p: 3,
			then: func(t *testing.T, h *wmHarness) { h.tick(t, 1) },
			want: []string{"wm 99"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snaps := map[int][]SplitState{}
			checkpointed := int64(abi.NoWatermark)
			before := tc.before(t)
			for _, s := range before {
				states, err := DecodeSnapshot(s.h.g.Encode())
				if err != nil {
					t.Fatal(err)
				}
				snaps[s.subtask] = states
				if s.subtask == tc.subtask && len(before) == tc.p {
					checkpointed = s.h.g.emitted
				}
			}
			h := tc.after()
			h.g.Restore(tc.subtask, tc.p, snaps)
			tc.then(t, h)
			got := h.watermarks()
			if !slices.Equal(got, tc.want) {
				t.Fatalf("watermarks %q, want %q", got, tc.want)
			}
			if len(got) > 0 {
				var first int64
				fmt.Sscanf(got[0], "wm %d", &first)
				if first < checkpointed {
					t.Errorf("first watermark after the restore %d, below the checkpointed %d", first, checkpointed)
				}
			}
			if !slices.Equal(h.announced, tc.wantAnnounc) {
				t.Errorf("announced %v, want %v", h.announced, tc.wantAnnounc)
			}
		})
	}
}

func TestWatermarkSnapshotDecodeErrors(t *testing.T) {
	good := newWMHarness(Bounded, 0, 0, 0, "a").g.Encode()
	badIdle := slices.Clone(good)
	badIdle[len(badIdle)-1] = 2
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not a snapshot", []byte("WSIJ\x01"), "not a watermark generator snapshot"},
		{"unknown version", []byte("WSWG\x07"), "watermark generator snapshot version 7, want 1"},
		{"truncated", good[:len(good)-1], "truncated"},
		{"idle flag", badIdle, `split "a": idle flag 2, want 0 or 1`},
		{"trailing bytes", append(slices.Clip(good), 9, 9), "2 bytes after the last split"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSnapshot(tc.data)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// FuzzWatermarkSnapshot decodes arbitrary bytes: the decoder never panics,
// and what it accepts encodes again to the same bytes.
func FuzzWatermarkSnapshot(f *testing.F) {
	h := newWMHarness(Bounded, 5, 0, 10, "a", "b.c")
	h.g.Split = 0
	if err := h.g.Process(context.Background(), []abi.Record{{Timestamp: 42}}); err != nil {
		f.Fatal(err)
	}
	if err := h.g.Tick(context.Background(), h.now+10); err != nil {
		f.Fatal(err)
	}
	f.Add(h.g.Encode())
	f.Add([]byte("WSWG\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		states, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		g := &Generator{}
		for _, s := range states {
			g.Names = append(g.Names, s.Name)
			g.splits = append(g.splits, splitTime{maxTs: s.MaxTs, punctWM: s.PunctWM, idle: s.Idle})
		}
		if again := g.Encode(); !bytes.Equal(again, data) {
			t.Fatalf("re-encoded %x, decoded from %x", again, data)
		}
	})
}
