package state

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
)

// TestEachKey visits every key and namespace of one state once, whatever
// its kind, and lets the visitor move the state while it runs.
func TestEachKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, fx *fixture) {
		k := fx.open(value("old", TTL{}), mapping("m", TTL{}), list("l", TTL{}), value("new", TTL{}))
		for i := range 50 {
			setKey(t, k, fmt.Sprintf("k%02d", i))
			must(t, k.SetValue(0, []byte(fmt.Sprintf("v%d", i))))
			if i%2 == 0 {
				must(t, k.MapPut(1, []byte("a"), []byte("1")))
				must(t, k.MapPut(1, []byte("b"), []byte("2")))
			}
			if i%5 == 0 {
				k.SetNamespace([]byte("w"))
				must(t, k.Append(2, []byte("x")))
				must(t, k.Append(2, []byte("y")))
			}
		}
		visit := func(id int) []string {
			var got []string
			must(t, k.EachKey(context.Background(), id, func(key, ns []byte) error {
				got = append(got, string(key)+"/"+string(ns))
				return nil
			}))
			sort.Strings(got)
			return got
		}
		var want0, want1, want2 []string
		for i := range 50 {
			want0 = append(want0, fmt.Sprintf("k%02d/", i))
			if i%2 == 0 {
				want1 = append(want1, fmt.Sprintf("k%02d/", i))
			}
			if i%5 == 0 {
				want2 = append(want2, fmt.Sprintf("k%02d/w", i))
			}
		}
		for _, c := range []struct {
			id   int
			want []string
		}{{0, want0}, {1, want1}, {2, want2}, {3, nil}} {
			if got := visit(c.id); !slices.Equal(got, c.want) {
				t.Errorf("state %d: visited %v, want %v", c.id, got, c.want)
			}
		}

		// Moving "old" into "new" while visiting: every key moves once.
		moved := 0
		must(t, k.EachKey(context.Background(), 0, func(key, ns []byte) error {
			if err := k.SetKey(key); err != nil {
				return err
			}
			k.SetNamespace(ns)
			v, ok, err := k.Value(0)
			if err != nil || !ok {
				return fmt.Errorf("key %q: value %q %v %v", key, v, ok, err)
			}
			if err := k.SetValue(3, append([]byte("moved-"), v...)); err != nil {
				return err
			}
			moved++
			return k.Clear(0)
		}))
		if moved != 50 {
			t.Errorf("moved %d keys, want 50", moved)
		}
		if got := visit(0); len(got) != 0 {
			t.Errorf("old state still holds %v", got)
		}
		setKey(t, k, "k07")
		if got := getValue(t, k, 3); got != "moved-v7" {
			t.Errorf("new state of k07 = %q, want moved-v7", got)
		}
	})
}

func TestEachKeyUnknownState(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	k := fx.open(value("a", TTL{}))
	if err := k.EachKey(context.Background(), 1, func(_, _ []byte) error { return nil }); err == nil {
		t.Fatal("EachKey of an undeclared state succeeded")
	}
}
