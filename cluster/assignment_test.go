package cluster

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// PlaceSlots: spread goes round robin from the leader; local fills the
// leader's free slots (its own job's included), then the others' by free
// slots, then wraps round robin.
func TestPlaceSlots(t *testing.T) {
	js := startJetStream(t)
	a := join(t, js, "a", 2, 2) // its job (2 slots) already counted
	join(t, js, "b", 4, 1)
	join(t, js, "c", 4, 0)
	eventually(t, "a sees three workers", func() bool { return len(a.Workers()) == 3 })
	tests := []struct {
		name       string
		slots, own int
		spread     bool
		want       []string
	}{
		{"spread", 4, 2, true, []string{"a", "c", "b", "a"}},
		{"spread fewer slots than workers", 2, 2, true, []string{"a", "c"}},
		{"local fits", 2, 2, false, []string{"a", "a"}},
		{"local overflows to the freest", 6, 2, false, []string{"a", "a", "c", "c", "c", "c"}},
		{"local beyond every free slot", 12, 2, false, []string{"a", "a", "c", "c", "c", "c", "b", "b", "b", "a", "c", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.PlaceSlots(tt.slots, tt.own, tt.spread); !slices.Equal(got, tt.want) {
				t.Fatalf("PlaceSlots(%d, %d, %v) = %v, want %v", tt.slots, tt.own, tt.spread, got, tt.want)
			}
		})
	}
}

// Assign numbers runs by the entry's revision, every worker hears them, and
// a worker whose lease moved writes none.
func TestAssignmentByLeaseHolder(t *testing.T) {
	ctx := context.Background()
	js := startJetStream(t)
	a := join(t, js, "a", 2, 0)
	b := join(t, js, "b", 2, 0)
	heard := make(chan Assignment, 8)
	b.OnAssignment(func(job string, as *Assignment) {
		if as != nil {
			heard <- *as
		}
	})
	lease, err := a.Acquire(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := lease.Assign(ctx, Assignment{Tasks: map[string]string{"src[0]": "a", "src[1]": "b"}, Restore: 3, RestoreJob: "j1"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := lease.Assign(ctx, Assignment{Tasks: map[string]string{"src[0]": "a", "src[1]": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.Run <= first.Run || first.Leader != "a" || !slices.Equal(first.Workers(), []string{"a", "b"}) {
		t.Fatalf("runs %d then %d, first %+v", first.Run, second.Run, first)
	}
	for _, want := range []Assignment{first, second} {
		got := <-heard
		if got.Run != want.Run || got.Restore != want.Restore || got.Tasks["src[1]"] != want.Tasks["src[1]"] {
			t.Fatalf("b heard %+v, want %+v", got, want)
		}
	}
	// b takes the lease over once a stops renewing it, as a frozen worker
	// would: b's assignment is the next run, and a's next one is refused.
	lease.Forget()
	eventually(t, "the lease expires for b", func() bool { return b.Lease("j1").Expired })
	taken := takeOver(t, b, "j1")
	third, err := taken.Assign(ctx, Assignment{Tasks: map[string]string{"src[0]": "b"}})
	if err != nil || third.Run <= second.Run || third.Leader != "b" {
		t.Fatalf("b's assignment %+v, %v: want run after %d led by b", third, err, second.Run)
	}
	if _, err := lease.Assign(ctx, Assignment{Tasks: map[string]string{"src[0]": "a"}}); !errors.Is(err, ErrLost) {
		t.Fatalf("assignment after the lease moved: %v, want ErrLost", err)
	}
}
