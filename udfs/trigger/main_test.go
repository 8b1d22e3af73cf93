package main

import (
	"reflect"
	"testing"

	udf "wasmstream.io/platform/sdk/go"
)

func harness(t *testing.T, name string) *udf.TriggerHarness {
	t.Helper()
	h, err := udf.NewTriggerHarness(name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// early fires for urgent records, at the window's end and at once when
// late, and moves its timer when sessions merge.
func TestEarly(t *testing.T) {
	h := harness(t, "early")
	key, w := []byte("k"), udf.Window{Start: 0, End: 10}
	for _, tc := range []struct {
		value string
		want  udf.TriggerResult
	}{
		{`{"n":1}`, udf.Continue},
		{`{"urgent":true}`, udf.Fire},
		{`{"urgent":"yes"}`, udf.Continue},
	} {
		if got, err := h.Element(key, w, udf.Record{Value: []byte(tc.value), Timestamp: 3}); err != nil || got != tc.want {
			t.Errorf("%s: %v %v, want %v", tc.value, got, err, tc.want)
		}
	}
	if got := h.Timers(key, w); len(got) != 1 || got[0].Timestamp != 9 || got[0].Domain != udf.EventTime {
		t.Fatalf("timers %+v, want one at 9", got)
	}
	if got, err := h.Timer(key, w, udf.EventTime, 9); err != nil || got != udf.Fire {
		t.Fatalf("end: %v %v", got, err)
	}
	if got, err := h.Timer(key, w, udf.EventTime, 14); err != nil || got != udf.Continue {
		t.Fatalf("cleanup: %v %v", got, err)
	}
	h.SetWatermark(9)
	if got, err := h.Element(key, w, udf.Record{Value: []byte(`{}`), Timestamp: 4}); err != nil || got != udf.Fire {
		t.Fatalf("late record: %v %v", got, err)
	}
	a, b, merged := udf.Window{Start: 20, End: 30}, udf.Window{Start: 35, End: 45}, udf.Window{Start: 20, End: 45}
	h.SetWatermark(15)
	for _, s := range []udf.Window{a, b} {
		if _, err := h.Element(key, s, udf.Record{Value: []byte(`{}`), Timestamp: s.Start}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Merge(key, merged, a, b); err != nil {
		t.Fatal(err)
	}
	if len(h.Timers(key, a))+len(h.Timers(key, b)) != 0 {
		t.Fatalf("merged sessions kept timers: %+v %+v", h.Timers(key, a), h.Timers(key, b))
	}
	if got := h.Timers(key, merged); len(got) != 1 || got[0].Timestamp != 44 {
		t.Fatalf("merged session's timers %+v, want one at 44", got)
	}
}

// pairs fires and purges every second record, keeps its count and timer
// in its state, and adds counts when sessions merge.
func TestPairs(t *testing.T) {
	h := harness(t, "pairs")
	key, w := []byte("k"), udf.Window{Start: 0, End: 100}
	h.SetProcessingTime(50)
	if got, err := h.Element(key, w, udf.Record{Value: []byte("x")}); err != nil || got != udf.Continue {
		t.Fatalf("first: %v %v", got, err)
	}
	st, _ := h.State(key, w)
	if want := (pair{count: 1, timer: 60}).append(); !reflect.DeepEqual(st, want) {
		t.Fatalf("state %x, want %x", st, want)
	}
	if got, err := h.Element(key, w, udf.Record{Value: []byte("y")}); err != nil || got != udf.FireAndPurge {
		t.Fatalf("second: %v %v", got, err)
	}
	if _, ok := h.State(key, w); ok || len(h.Timers(key, w)) != 0 {
		t.Fatalf("after the pair: state %v, timers %+v", ok, h.Timers(key, w))
	}
	a, b, merged := udf.Window{Start: 0, End: 10}, udf.Window{Start: 5, End: 15}, udf.Window{Start: 0, End: 15}
	for _, s := range []udf.Window{a, b} {
		if _, err := h.Element(key, s, udf.Record{Value: []byte("z")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Merge(key, merged, a, b); err != nil {
		t.Fatal(err)
	}
	st, _ = h.State(key, merged)
	if want := (pair{count: 2, timer: 60}).append(); !reflect.DeepEqual(st, want) {
		t.Fatalf("merged state %x, want %x", st, want)
	}
	if got := h.Timers(key, merged); len(got) != 1 || got[0].Timestamp != 60 || got[0].Domain != udf.ProcessingTime {
		t.Fatalf("merged timers %+v", got)
	}
	if got, err := h.Timer(key, merged, udf.ProcessingTime, 60); err != nil || got != udf.Fire {
		t.Fatalf("timer: %v %v", got, err)
	}
	if err := h.Clear(key, merged); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.State(key, merged); ok {
		t.Fatal("state after clear")
	}
}
