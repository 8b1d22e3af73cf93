package process

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/state"
)

// newProcessOp makes a process operator over a module's function (and
// on_timer function), owning subtask i of p's key groups.
func newTestProcessOp(t *testing.T, mod *host.Module, function, onTimer string, p, i int, next operator.Stage) *Operator {
	t.Helper()
	call := func(name string) operator.GroupCall {
		fn := mod.Description.Lookup(name)
		if fn < 0 {
			t.Fatalf("no function %s", name)
		}
		return operator.GroupCall{Module: mod.ID, Function: name, Fn: fn, Guest: mod.NewGuest(host.InstanceConfig{})}
	}
	descs, err := operator.StateDescriptors(mod.Description, nil)
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := state.Open(state.Config{MaxParallelism: 128, Range: state.RangeOf(128, p, i), States: descs})
	if err != nil {
		t.Fatal(err)
	}
	var timer *operator.GroupCall
	if onTimer != "" {
		g := call(onTimer)
		timer = &g
	}
	policy := &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: "op", Counts: &operator.ErrorCounts{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	op := New("op", call(function), timer, keyed, 1024, policy, next)
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	return op
}

func keyed(key, value string, ts int64) abi.Record {
	return abi.Record{Key: []byte(key), Value: []byte(value), Timestamp: ts}
}

// A batch reaches the function grouped by key, each key's records in
// arrival order.
func TestProcessGroupsByKey(t *testing.T) {
	mod := optest.Module(t, "dedup")
	sink := &optest.Values{}
	op := newTestProcessOp(t, mod, "dedup", "", 1, 0, sink)
	ctx := context.Background()
	if err := op.Process(ctx, []abi.Record{keyed("b", "b1", 1), keyed("a", "a1", 2), keyed("b", "b2", 3), keyed("c", "c1", 4), keyed("a", "a2", 5)}); err != nil {
		t.Fatal(err)
	}
	if err := op.Process(ctx, []abi.Record{keyed("c", "c2", 6), keyed("d", "d1", 7)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1", "b1", "c1", "d1"}; !reflect.DeepEqual(sink.Values, want) {
		t.Fatalf("got %q, want %q", sink.Values, want)
	}
}

// txn is a fraud module transaction.
func txn(account string, amount float64, ts int64) abi.Record {
	return keyed(account, fmt.Sprintf(`{"amount":%.2f}`, amount), ts)
}

// The operator's state and timers, snapshotted at parallelism 1, restore
// into parallelism 3: each subtask gets the accounts of its key groups, with
// their pending small transactions and timers.
func TestProcessSnapshotRescales(t *testing.T) {
	mod := optest.Module(t, "fraud")
	ctx := context.Background()
	accounts := make([]string, 30)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("acct-%d", i)
	}
	before := newTestProcessOp(t, mod, "detect", "expire", 1, 0, &optest.Values{})
	var recs []abi.Record
	for i, a := range accounts {
		recs = append(recs, txn(a, 0.5, int64(1000+i)))
	}
	if err := before.Process(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if n := before.timers.Len(abi.EventTime); n != len(accounts) {
		t.Fatalf("%d timers, want %d", n, len(accounts))
	}
	snap, err := before.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info, err := snap.WriteTo(ctx, &buf)
	snap.Release()
	if err != nil || info.Timers != int64(len(accounts)) || info.Entries != int64(len(accounts)) {
		t.Fatalf("snapshot %+v, %v", info, err)
	}
	var alerts []string
	timers, left := 0, 0
	for i := 0; i < 3; i++ {
		sink := &optest.Values{}
		op := newTestProcessOp(t, mod, "detect", "expire", 3, i, sink)
		if err := op.Restore(ctx, []io.Reader{bytes.NewReader(buf.Bytes())}, 0, state.Range{}); err != nil {
			t.Fatal(err)
		}
		timers += op.timers.Len(abi.EventTime)
		r := state.RangeOf(128, 3, i)
		var mine []abi.Record
		for j, a := range accounts {
			if !r.Contains(state.KeyGroup([]byte(a), 128)) {
				continue
			}
			if j%2 == 0 {
				mine = append(mine, txn(a, 900, 2000))
			}
		}
		if err := op.Advance(ctx, 1000+60_000+14); err != nil {
			t.Fatal(err)
		}
		if err := op.Process(ctx, mine); err != nil {
			t.Fatal(err)
		}
		left += op.timers.Len(abi.EventTime)
		alerts = append(alerts, sink.Values...)
	}
	if timers != len(accounts) {
		t.Fatalf("%d timers restored, want %d", timers, len(accounts))
	}
	// Timers at or before the watermark fired; a large transaction deleted
	// the others of even accounts.
	want := 0
	for j := 15; j < len(accounts); j++ {
		if j%2 == 1 {
			want++
		}
	}
	if left != want {
		t.Fatalf("%d timers left, want %d", left, want)
	}
	sort.Strings(alerts)
	var wantAlerts []string
	for j, a := range accounts {
		if j%2 == 0 && 1000+j+60_000 > 1000+60_000+14 {
			wantAlerts = append(wantAlerts, fmt.Sprintf(`{"account":%q,"ts":2000,"amount":900.00}`, a))
		}
	}
	sort.Strings(wantAlerts)
	if !reflect.DeepEqual(alerts, wantAlerts) || len(wantAlerts) != 7 {
		t.Fatalf("alerts %q\nwant %q", alerts, wantAlerts)
	}
}

// A key of another subtask's key groups is an error, not silent state in
// the wrong place.
func TestProcessRejectsForeignKeys(t *testing.T) {
	mod := optest.Module(t, "dedup")
	op := newTestProcessOp(t, mod, "dedup", "", 2, 0, &optest.Values{})
	foreign := ""
	for i := 0; foreign == ""; i++ {
		if k := fmt.Sprintf("k%d", i); !state.RangeOf(128, 2, 0).Contains(state.KeyGroup([]byte(k), 128)) {
			foreign = k
		}
	}
	err := op.Process(context.Background(), []abi.Record{keyed(foreign, "x", 1)})
	if err == nil || !strings.Contains(err.Error(), "key outside the subtask's key groups") {
		t.Fatalf("got %v", err)
	}
}

// Processing-time timers fire through on_timer when the task ticks past
// them, not before.
func TestProcessTicksFireProcessingTimers(t *testing.T) {
	mod := optest.Module(t, "fraud")
	sink := &optest.Values{}
	op := newTestProcessOp(t, mod, "detect", "expire", 1, 0, sink)
	ctx := context.Background()
	if err := op.Process(ctx, []abi.Record{txn("a", 0.5, 1000), txn("b", 0.5, 1000)}); err != nil {
		t.Fatal(err)
	}
	// A processing-time timer for a, as if the function had registered it.
	op.env.Begin()
	op.env.Add([]byte("a"), nil)
	if err := op.env.Enter(0); err != nil {
		t.Fatal(err)
	}
	if err := op.env.RegisterTimer(abi.ProcessingTime, 5000); err != nil {
		t.Fatal(err)
	}
	if err := op.Tick(ctx, 4999); err != nil || op.timers.Len(abi.ProcessingTime) != 1 {
		t.Fatalf("tick before the timer: %v, %d timers", err, op.timers.Len(abi.ProcessingTime))
	}
	if err := op.Tick(ctx, 5000); err != nil || op.timers.Len(abi.ProcessingTime) != 0 {
		t.Fatalf("tick at the timer: %v, %d timers", err, op.timers.Len(abi.ProcessingTime))
	}
	// expire cleared a's small transaction; b's is still there.
	if err := op.Process(ctx, []abi.Record{txn("a", 900, 2000), txn("b", 900, 2000)}); err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"account":"b","ts":2000,"amount":900.00}`}; !reflect.DeepEqual(sink.Values, want) {
		t.Fatalf("alerts %q, want %q", sink.Values, want)
	}
}
