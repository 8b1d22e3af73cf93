package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// Functions of testdata/bomb.wat.
const (
	fnBombTrap = iota
	fnBombFill
)

const (
	testBudget = 256 << 20
	// bombLimit is the guests' memory limit: far above the budget, as a
	// job may set it.
	bombLimit = 2 << 30
	// bombMin is bomb.wat's initial memory, reserved at instantiation.
	bombMin = 2 * pageSize
	// bombHeld is what a bomb gets under testBudget: its initial memory
	// and as many 1 MiB steps as fit.
	bombHeld = bombMin + (testBudget-bombMin)/(1<<20)*(1<<20)
	// rssMargin is how far above its baseline plus what the guests hold the
	// process's resident memory may be. After the baseline is read the
	// tests allocate only error values and the sampler's buffers; the rest
	// is the page tables of the guests' pages (2 KiB per MiB, 512 KiB for
	// the whole budget) and what the Go runtime keeps of the heap that
	// instantiation and closing use (under 1 MiB here), so 16 MiB leaves
	// room for noise while it would catch a second copy of any guest
	// memory, which is at least 128 MiB here.
	rssMargin = 16 << 20
)

func newBudgetHost(t testing.TB, budget int64) *Host {
	t.Helper()
	h, err := New(context.Background(), Config{Logger: slog.New(&recorder{}), MemoryBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

// rss reads the process's resident memory (VmRSS) in bytes.
func rss(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			if n := parseKB(rest); n > 0 {
				return n
			}
		}
	}
	t.Fatalf("no VmRSS in /proc/self/status:\n%s", data)
	return 0
}

// firstLine is an error's text up to its wasm stack trace.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// wantBudgetError checks that err is the *CallError of a memory.grow the
// budget refused.
func wantBudgetError(t *testing.T, err error, m *Module, fn int, size, asked, free int64) {
	t.Helper()
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindMemoryLimit {
		t.Fatalf("error %v (%T), want a *CallError of kind %s", err, err, KindMemoryLimit)
	}
	want := fmt.Sprintf("udf[%s] function[%s]: memory_limit: memory %d bytes, growing to %d refused: host.memory_budget of %d bytes has %d bytes free: wasm error: unreachable",
		m.ID, m.Description.Functions[fn].Name, size, asked, testBudget, free)
	if got := firstLine(err); got != want {
		t.Fatalf("error\n%s\nwant\n%s", got, want)
	}
}

// TestMemoryBudgetBoundsBombs: guests whose limit is far above the budget
// grow until the budget is spent, and no further; the process's resident
// memory stays within the budget plus rssMargin, and the memory of a
// discarded instance goes back to the OS at once.
func TestMemoryBudgetBoundsBombs(t *testing.T) {
	if !mapMemoryDefault {
		t.Skip("guest memories are Go slices on this platform; TestMemoryBudgetTrim covers them")
	}
	h := newBudgetHost(t, testBudget)
	ctx := context.Background()
	m := compileFixture(t, h, "bomb")
	frame := inputFrame(values("x")...)
	holder := newPool(t, m, InstanceConfig{MemoryLimit: bombLimit})
	bomber := newPool(t, m, InstanceConfig{MemoryLimit: bombLimit})
	debug.FreeOSMemory()
	base := rss(t)

	// A bomb alone gets the whole budget, then traps.
	_, err := bomber.Call(ctx, fnBombTrap, frame)
	wantBudgetError(t, err, m, fnBombTrap, bombHeld, bombHeld+1<<20, testBudget-bombHeld)
	if got := h.MemoryReserved(); got != 0 {
		t.Fatalf("reserved %d after the bomb's instance was discarded, want 0", got)
	}
	if after := rss(t); after > base+rssMargin {
		t.Fatalf("resident memory %d after the bomb's instance was discarded, baseline %d: more than %d above", after, base, rssMargin)
	}

	// A guest that keeps the budget holds its pages, and only them.
	if _, err := holder.Call(ctx, fnBombFill, frame); err != nil {
		t.Fatal(err)
	}
	if got := holder.MemoryBytes(); got != bombHeld {
		t.Fatalf("holder's memory %d, want %d", got, bombHeld)
	}
	held := rss(t)
	t.Logf("resident memory: baseline %d, holding %d bytes %d", base, bombHeld, held)
	if held < base+bombHeld-rssMargin || held > base+testBudget+rssMargin {
		t.Fatalf("resident memory %d while %d bytes are held, baseline %d: want within [%d, %d]",
			held, bombHeld, base, base+bombHeld-rssMargin, base+testBudget+rssMargin)
	}

	// A second bomb meanwhile gets what is left, less than one step.
	free := int64(testBudget - bombHeld - bombMin)
	_, err = bomber.Call(ctx, fnBombTrap, frame)
	wantBudgetError(t, err, m, fnBombTrap, bombMin, bombMin+1<<20, free)
	if got := rss(t); got > base+testBudget+rssMargin {
		t.Fatalf("resident memory %d with the budget spent, baseline %d: more than the budget plus %d above", got, base, rssMargin)
	}

	// Closing the holder keeps its instance idle, still reserved, until a
	// guest short of budget needs it: that guest's first grow closes the
	// idle instance and goes on.
	if err := holder.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.MemoryReserved(); got != bombHeld {
		t.Fatalf("reserved %d with the holder's instance idle, want %d", got, bombHeld)
	}
	other := newPool(t, m, InstanceConfig{MemoryLimit: bombLimit / 2}) // another runtime: not the idle instance
	if _, err := other.Call(ctx, fnBombFill, frame); err != nil {
		t.Fatal(err)
	}
	if got := other.MemoryBytes(); got != bombHeld {
		t.Fatalf("memory %d after the idle instance was closed for it, want %d", got, bombHeld)
	}
	if got := h.MemoryReserved(); got != bombHeld {
		t.Fatalf("reserved %d, want %d", got, bombHeld)
	}
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.evictIdle(ctx); n != 1 {
		t.Fatalf("evicted %d idle instances, want 1", n)
	}
	if got := h.MemoryReserved(); got != 0 {
		t.Fatalf("reserved %d with every instance closed, want 0", got)
	}
	if after := rss(t); after > base+rssMargin {
		t.Fatalf("resident memory %d with every instance closed, baseline %d: more than %d above", after, base, rssMargin)
	}
}

// TestMemoryBudgetInstantiation: an instance whose initial memory the budget
// cannot cover is not made, and the call fails with KindMemoryLimit.
func TestMemoryBudgetInstantiation(t *testing.T) {
	h := newBudgetHost(t, testBudget)
	m := compileFixture(t, h, "bomb")
	if !h.budget.tryReserve(testBudget - bombMin + 1) {
		t.Fatal("could not take the budget")
	}
	p := newPool(t, m, InstanceConfig{MemoryLimit: bombLimit})
	_, err := p.Call(context.Background(), fnBombFill, inputFrame(values("x")...))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindMemoryLimit {
		t.Fatalf("error %v (%T), want a *CallError of kind %s", err, err, KindMemoryLimit)
	}
	want := fmt.Sprintf("udf[%s] function[fill]: memory_limit: instantiate: memory of %d bytes refused: host.memory_budget of %d bytes has %d bytes free",
		m.ID, bombMin, testBudget, bombMin-1)
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
	if n := p.Instantiations(); n != 0 {
		t.Fatalf("instantiations %d, want 0", n)
	}
	h.budget.release(testBudget - bombMin + 1)
	if _, err := p.Call(context.Background(), fnBombFill, inputFrame(values("x")...)); err != nil {
		t.Fatal(err)
	}
	if got := p.MemoryBytes(); got != bombHeld {
		t.Fatalf("memory %d, want %d", got, bombHeld)
	}
}

// TestMemoryBudgetTrim: where guest memory is a Go slice, the budget bounds
// it the same way, and once its instance is closed the trimmer hands the
// freed heap back to the OS.
func TestMemoryBudgetTrim(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow of the heap stays resident")
	}
	h := newBudgetHost(t, testBudget)
	h.mapMemory = false
	ctx := context.Background()
	m := compileFixture(t, h, "bomb")
	p := newPool(t, m, InstanceConfig{MemoryLimit: bombLimit})
	frame := inputFrame(values("x")...)
	debug.FreeOSMemory()
	base := rss(t)
	if _, err := p.Call(ctx, fnBombFill, frame); err != nil {
		t.Fatal(err)
	}
	if got := p.MemoryBytes(); got != bombHeld {
		t.Fatalf("memory %d, want %d", got, bombHeld)
	}
	held := rss(t)
	trims := h.trim.trims.Load()
	_, err := p.Call(ctx, fnBombTrap, frame) // grows no more: traps and is discarded
	wantBudgetError(t, err, m, fnBombTrap, bombHeld, bombHeld+1<<20, testBudget-bombHeld)
	for h.trim.trims.Load() == trims {
		time.Sleep(10 * time.Millisecond)
	}
	after := rss(t)
	t.Logf("resident memory: baseline %d, holding %d bytes %d, after the trim %d", base, bombHeld, held, after)
	if held < base+bombHeld-rssMargin {
		t.Fatalf("resident memory %d while %d bytes are held, baseline %d: the test measures nothing", held, bombHeld, base)
	}
	if after > base+rssMargin {
		t.Fatalf("resident memory %d after the trim, baseline %d: more than %d above", after, base, rssMargin)
	}
}

// TestTrimmerRateLimit: requests while a trim is pending or just done merge
// into one trim per interval.
func TestTrimmerRateLimit(t *testing.T) {
	tr := startTrimmer(time.Hour)
	defer tr.stop()
	tr.request()
	for tr.trims.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for range 100 {
		tr.request()
	}
	// The trimmer waits out its hour before it serves the requests.
	if n := tr.trims.Load(); n != 1 {
		t.Fatalf("%d trims, want 1", n)
	}
	if len(tr.wake) != 1 {
		t.Fatalf("%d requests pending, want 1", len(tr.wake))
	}
}

func TestParseMemInfo(t *testing.T) {
	for in, want := range map[string]int64{" 24683584 kB": 24683584 << 10, "12": 12, "x kB": 0, "": 0, "-1 kB": 0} {
		if got := parseKB([]byte(in)); got != want {
			t.Errorf("parseKB(%q) = %d, want %d", in, got, want)
		}
	}
	if d := DefaultMemoryBudget(); d <= 0 {
		t.Fatalf("default budget %d", d)
	}
	if total := machineMemory(); total > 0 {
		if d := DefaultMemoryBudget(); d > total/2 {
			t.Fatalf("default budget %d above half of MemTotal %d", d, total)
		}
	}
}
