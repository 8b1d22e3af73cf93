package watermark

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"wasmstream.io/platform/abi"
)

type reg struct {
	ts      int64
	key, ns string
}

func fired(t *testing.T, s *TimerService, domain abi.TimeDomain, upTo int64) []reg {
	t.Helper()
	var got []reg
	if err := s.Advance(domain, upTo, func(tm Timer) error {
		got = append(got, reg{tm.Timestamp, string(tm.Key), string(tm.Namespace)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTimerServiceOrderAndDedup(t *testing.T) {
	tests := []struct {
		name    string
		regs    []reg
		deletes []reg
		upTo    int64
		want    []reg
		left    int
	}{
		{
			name: "timestamp then key then namespace",
			regs: []reg{{5, "b", ""}, {3, "z", ""}, {5, "a", "y"}, {5, "a", "x"}, {9, "a", ""}},
			upTo: 5,
			want: []reg{{3, "z", ""}, {5, "a", "x"}, {5, "a", "y"}, {5, "b", ""}},
			left: 1,
		},
		{
			name: "duplicates register once",
			regs: []reg{{1, "k", "n"}, {1, "k", "n"}, {1, "k", ""}, {1, "k", "n"}},
			upTo: 10,
			want: []reg{{1, "k", ""}, {1, "k", "n"}},
		},
		{
			name: "key and namespace boundary is part of the identity",
			regs: []reg{{1, "ab", "c"}, {1, "a", "bc"}},
			upTo: 1,
			want: []reg{{1, "a", "bc"}, {1, "ab", "c"}},
		},
		{
			name:    "delete",
			regs:    []reg{{1, "a", ""}, {2, "b", ""}, {3, "c", ""}, {4, "d", ""}},
			deletes: []reg{{2, "b", ""}, {7, "x", ""}, {4, "d", "other"}},
			upTo:    10,
			want:    []reg{{1, "a", ""}, {3, "c", ""}, {4, "d", ""}},
		},
		{
			name: "nothing due",
			regs: []reg{{10, "a", ""}},
			upTo: 9,
			left: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewTimerService()
			for _, r := range tt.regs {
				s.Register(abi.EventTime, r.ts, []byte(r.key), []byte(r.ns))
			}
			for _, r := range tt.deletes {
				s.Delete(abi.EventTime, r.ts, []byte(r.key), []byte(r.ns))
			}
			if got := fired(t, s, abi.EventTime, tt.upTo); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("fired %v, want %v", got, tt.want)
			}
			if got := s.Len(abi.EventTime); got != tt.left {
				t.Fatalf("Len = %d, want %d", got, tt.left)
			}
		})
	}
}

func TestTimerServiceDomainsAreSeparate(t *testing.T) {
	s := NewTimerService()
	s.Register(abi.EventTime, 5, []byte("k"), nil)
	s.Register(abi.ProcessingTime, 5, []byte("k"), nil)
	s.Register(abi.ProcessingTime, 2, []byte("p"), nil)
	if got := fired(t, s, abi.EventTime, 100); !reflect.DeepEqual(got, []reg{{5, "k", ""}}) {
		t.Fatalf("event time fired %v", got)
	}
	if ts, ok := s.Next(abi.ProcessingTime); !ok || ts != 2 {
		t.Fatalf("Next(processing) = %d, %v; want 2, true", ts, ok)
	}
	if _, ok := s.Next(abi.EventTime); ok {
		t.Fatal("Next(event) reports a timer after all fired")
	}
	if got := s.Len(abi.ProcessingTime); got != 2 {
		t.Fatalf("Len(processing) = %d, want 2", got)
	}
}

func TestTimerServiceRegisterDuringFire(t *testing.T) {
	s := NewTimerService()
	s.Register(abi.EventTime, 1, []byte("a"), nil)
	var got []int64
	err := s.Advance(abi.EventTime, 10, func(tm Timer) error {
		got = append(got, tm.Timestamp)
		if len(got) == 1 {
			s.Register(abi.EventTime, 5, []byte("a"), nil)  // due: fires in this call
			s.Register(abi.EventTime, 11, []byte("a"), nil) // not due
			s.Register(abi.EventTime, 1, []byte("a"), nil)  // the firing timer again: removed, so it fires again
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 1, 5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	if ts, ok := s.Next(abi.EventTime); !ok || ts != 11 {
		t.Fatalf("Next = %d, %v; want 11, true", ts, ok)
	}
}

func TestTimerServiceFireError(t *testing.T) {
	s := NewTimerService()
	for ts := int64(1); ts <= 3; ts++ {
		s.Register(abi.EventTime, ts, []byte("k"), nil)
	}
	boom := errors.New("boom")
	err := s.Advance(abi.EventTime, 3, func(tm Timer) error {
		if tm.Timestamp == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Advance error = %v, want boom", err)
	}
	if got := fired(t, s, abi.EventTime, 3); !reflect.DeepEqual(got, []reg{{3, "k", ""}}) {
		t.Fatalf("left after the error: %v", got)
	}
}

func TestTimerServiceCopiesBytes(t *testing.T) {
	s := NewTimerService()
	key, ns := []byte("key"), []byte("ns")
	s.Register(abi.EventTime, 1, key, ns)
	copy(key, "XXX")
	copy(ns, "YY")
	if got := fired(t, s, abi.EventTime, 1); !reflect.DeepEqual(got, []reg{{1, "key", "ns"}}) {
		t.Fatalf("fired %v", got)
	}
}

func TestTimerServiceSnapshotRestore(t *testing.T) {
	s := NewTimerService()
	for i := 20; i > 0; i-- {
		s.Register(abi.EventTime, int64(i%7), []byte(fmt.Sprintf("k%02d", i)), []byte{byte(i)})
	}
	s.Register(abi.ProcessingTime, 99, []byte("p"), nil)
	snap := s.Timers(abi.EventTime)
	if len(snap) != 20 {
		t.Fatalf("snapshot has %d timers, want 20", len(snap))
	}
	for i := 1; i < len(snap); i++ {
		if !timerLess(&snap[i-1], &snap[i]) {
			t.Fatalf("snapshot out of firing order at %d", i)
		}
	}
	r := NewTimerService()
	r.Restore(abi.EventTime, snap)
	r.Restore(abi.EventTime, snap[:3]) // duplicates are ignored
	want := fired(t, s, abi.EventTime, 100)
	if got := fired(t, r, abi.EventTime, 100); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored service fired %v, want %v", got, want)
	}
	if r.Len(abi.ProcessingTime) != 0 {
		t.Fatal("restore of event time touched processing time")
	}
}

func TestTimerServiceAllocations(t *testing.T) {
	s := NewTimerService()
	key, ns := []byte("some-key"), []byte("window-0001")
	s.Register(abi.EventTime, 5, key, ns)
	// A duplicate registration, a miss on delete and an empty advance
	// allocate nothing.
	allocs := testing.AllocsPerRun(100, func() {
		s.Register(abi.EventTime, 5, key, ns)
		s.Delete(abi.EventTime, 6, key, ns)
		_ = s.Advance(abi.EventTime, 4, func(Timer) error { return nil })
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per duplicate register, want 0", allocs)
	}
	// Once timers have fired, new ones reuse their entries: a steady
	// state of register and fire allocates nothing.
	ts := int64(100)
	s.Register(abi.EventTime, ts, key, ns)
	allocs = testing.AllocsPerRun(100, func() {
		ts++
		s.Register(abi.EventTime, ts, key, ns)
		_ = s.Advance(abi.EventTime, ts, func(Timer) error { return nil })
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per timer registered and fired, want 0", allocs)
	}
}

func BenchmarkTimerServiceRegisterFire(b *testing.B) {
	s := NewTimerService()
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%d", i))
	}
	ns := []byte("0123456789abcdef")
	fire := func(Timer) error { return nil }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Register(abi.EventTime, int64(i/1024), keys[i%1024], ns)
		if i%1024 == 1023 {
			_ = s.Advance(abi.EventTime, int64(i/1024), fire)
		}
	}
}
