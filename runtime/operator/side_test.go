package operator

import (
	"context"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
)

// sideTape records what reaches a side output's consumer.
type sideTape struct {
	Discard
	values []string
}

func (s *sideTape) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		s.values = append(s.values, string(r.Value))
	}
	return nil
}

// TestSideOutputsMarks: records of a failed input or call are dropped, the
// others flushed to their output's consumer, in order.
func TestSideOutputsMarks(t *testing.T) {
	a, b := &sideTape{}, &sideTape{}
	s := NewSideOutputs("op", 2, []string{"a", "b"}, []Stage{a, b})
	emit := func(i int, v string) { s.Emit(i, nil, []byte(v), 0, nil) }
	s.MarkCall()
	s.MarkInput()
	emit(0, "kept")
	s.MarkInput()
	emit(0, "dropped")
	emit(1, "dropped")
	s.DropInput()
	s.MarkInput()
	emit(1, "kept")
	if s.Full() {
		t.Fatal("full with a record per output, on a max of 2")
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.MarkCall()
	emit(0, "lost with its call")
	s.DropCall()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.values, ",") != "kept" || strings.Join(b.values, ",") != "kept" {
		t.Fatalf("a %q, b %q", a.values, b.values)
	}
	for _, tc := range []struct {
		name  string
		index int
	}{{"a", 0}, {"b", 1}, {"c", -1}, {"", -1}} {
		if got := s.Find([]byte(tc.name)); got != tc.index {
			t.Errorf("Find(%q) = %d, want %d", tc.name, got, tc.index)
		}
	}
	if err := s.Undeclared([]byte("c")).Error(); err != `side output "c" is not declared: operator "op"'s side_outputs are a, b` {
		t.Errorf("Undeclared: %s", err)
	}
	var none *SideOutputs
	if none.Find([]byte("a")) != -1 || none.Full() || none.Flush(context.Background()) != nil || none.Advance(context.Background(), 1) != nil {
		t.Error("a nil SideOutputs is not empty")
	}
}

// TestSideOutputsAllocations: emitting and flushing side records allocates
// nothing once the buffers have grown.
func TestSideOutputsAllocations(t *testing.T) {
	s := NewSideOutputs("op", 1024, []string{"a"}, []Stage{Discard{}})
	ctx := context.Background()
	value := []byte("value")
	run := func() {
		s.MarkCall()
		for range 100 {
			s.MarkInput()
			if i := s.Find([]byte("a")); i >= 0 {
				s.Emit(i, nil, value, 1, nil)
			}
		}
		_ = s.Advance(ctx, 1)
		_ = s.Flush(ctx)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}
