package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMemoryBudget(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	budget := NewBudget(1 << 20)
	a := fx.openRange(128, Range{0, 63}, budget, value("v", TTL{}))
	b := fx.openRange(128, Range{64, 127}, budget, value("v", TTL{}))
	big := make([]byte, 4<<10)
	var err error
	written := 0
	for i := 0; err == nil && i < 1000; i++ {
		key := keyName(i)
		k := a
		if !a.rng.Contains(KeyGroup([]byte(key), 128)) {
			k = b
		}
		setKey(t, k, key)
		if err = k.SetValue(0, big); err == nil {
			written++
		}
	}
	var berr *BudgetError
	if !errors.As(err, &berr) {
		t.Fatalf("writing past the budget: %v", err)
	}
	if !strings.Contains(err.Error(), "state: {backend: pebble}") || !strings.Contains(err.Error(), "1048576 bytes") {
		t.Fatalf("message %q", err)
	}
	if written < 200 || written > 256 {
		t.Fatalf("%d values of 4 KiB fit a budget of 1 MiB", written)
	}
	if used := budget.Used(); used > budget.Limit() || used < budget.Limit()-2*budgetChunk {
		t.Fatalf("budget used %d of %d", used, budget.Limit())
	}
	for i := 0; i < 1000; i++ {
		key := keyName(i)
		k := a
		if !a.rng.Contains(KeyGroup([]byte(key), 128)) {
			k = b
		}
		setKey(t, k, key)
		must(t, k.Clear(0))
	}
	if a.Bytes() != 0 || b.Bytes() != 0 {
		t.Fatalf("bytes after clearing everything: %d, %d", a.Bytes(), b.Bytes())
	}
	if used := budget.Used(); used > 2*2*budgetChunk {
		t.Fatalf("budget used %d after clearing everything", used)
	}
	must(t, a.Close())
	must(t, b.Close())
	if used := budget.Used(); used != 0 {
		t.Fatalf("budget used %d after closing", used)
	}
}

func TestMemoryAccountsEveryKind(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	k := fx.open(kinds...)
	fill(t, k, keys(100), "")
	if k.Bytes() < 100*2*(3*cellOverhead) {
		t.Fatalf("bytes %d for 600 cells", k.Bytes())
	}
	for _, key := range keys(100) {
		setKey(t, k, key)
		for _, ns := range []string{"", "w1"} {
			k.SetNamespace([]byte(ns))
			must(t, k.Clear(0))
			must(t, k.Clear(1))
			must(t, k.MapRemove(2, []byte("a")))
			must(t, k.MapRemove(2, []byte("b"+ns)))
		}
	}
	if k.Bytes() != 0 {
		t.Fatalf("bytes %d after removing everything", k.Bytes())
	}
}

// Incremental cleanup checks CleanupSize entries per access, from where
// the last access stopped.
func TestMemoryIncrementalCleanup(t *testing.T) {
	fx := &fixture{t: t, backend: BackendMemory, clock: newClock(0)}
	k := fx.open(value("v", ttl(10*time.Millisecond)))
	for i := 0; i < 100; i++ {
		setKey(t, k, keyName(i))
		must(t, k.SetValue(0, []byte("x")))
	}
	fx.clock.advance(10)
	setKey(t, k, "somebody else")
	for access := 1; access <= 20; access++ {
		want(t, getValue(t, k, 0), "<absent>")
		if n := stored(t, k); n != 100-5*access {
			t.Fatalf("after %d accesses %d entries stored, want %d", access, n, 100-5*access)
		}
	}
	if k.Bytes() != 0 {
		t.Fatalf("bytes %d with nothing stored", k.Bytes())
	}
	want(t, getValue(t, k, 0), "<absent>")
}

// The Pebble backend's sweeper drops expired entries in the background.
func TestPebbleBackgroundSweep(t *testing.T) {
	clock := newClock(0)
	k, err := Open(Config{Backend: BackendPebble, Dir: t.TempDir() + "/db", MaxParallelism: 128, Range: Range{0, 127},
		States: []Descriptor{value("v", ttl(10*time.Millisecond)), list("l", ttl(20*time.Millisecond))}, Clock: clock, SweepInterval: time.Millisecond})
	must(t, err)
	defer k.Close()
	for i := 0; i < 2000; i++ {
		setKey(t, k, keyName(i))
		must(t, k.SetValue(0, []byte("x")))
		must(t, k.Append(1, []byte("x")))
	}
	clock.advance(10)
	setKey(t, k, keyName(0))
	must(t, k.Append(1, []byte("y")))
	for deadline := time.Now().Add(time.Minute); stored(t, k) != 2000; {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries stored a minute after 2000 expired", stored(t, k))
		}
		time.Sleep(time.Millisecond)
	}
	clock.advance(10)
	for deadline := time.Now().Add(time.Minute); stored(t, k) != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries stored a minute after 1999 more expired", stored(t, k))
		}
		time.Sleep(time.Millisecond)
	}
	wantList(t, getList(t, k, 1), "y")
}
