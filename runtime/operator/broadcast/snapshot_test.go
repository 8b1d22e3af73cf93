package broadcast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/state"
)

// snapshotBytes writes op's snapshot into bytes.
func snapshotBytes(t *testing.T, op *Operator) []byte {
	t.Helper()
	blob, err := op.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Release()
	var buf bytes.Buffer
	if err := blob.Write(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readers(blobs [][]byte) []io.Reader {
	out := make([]io.Reader, len(blobs))
	for i, b := range blobs {
		out[i] = bytes.NewReader(b)
	}
	return out
}

// users are the keys of the rescale test, and mine those of subtask i of p.
var users = []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"}

func mine(p, i int) []string {
	var out []string
	r := state.RangeOf(128, p, i)
	for _, u := range users {
		if r.Contains(state.KeyGroup([]byte(u), 128)) {
			out = append(out, u)
		}
	}
	return out
}

// events is a batch of one event per user of keys.
func events(keys []string, ts int64, amount int) optest.JoinStep {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(`%s@%d {"amount":%d}`, k, ts, amount))
	}
	return optest.JoinStep("L " + joinSemi(parts))
}

func joinSemi(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += ";"
		}
		s += p
	}
	return s
}

// Snapshots of two subtasks restore into three: each new subtask holds the
// whole broadcast state (subtask 0's copy) and the hits of its own users,
// so that the events after the restore give exactly the results of a run
// without one.
func TestBroadcastSnapshotRescales(t *testing.T) {
	ctx := context.Background()
	rules := optest.JoinStep(`R @1 {"rule":"big","min":100};@1 {"rule":"any","min":0};@1 {"rule":"gone","min":5};@2 {"rule":"gone"}`)
	var blobs [][]byte
	for i := 0; i < 2; i++ {
		op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 2, i: i}, &optest.Tape{})
		if err := run(t, op, in, []optest.JoinStep{rules, events(mine(2, i), 3, 150)}); err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, snapshotBytes(t, op))
		// A rule after the snapshot is not in it.
		if err := run(t, op, in, []optest.JoinStep{`R @4 {"rule":"late","min":0}`}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for i := 0; i < 3; i++ {
		tape := &optest.Tape{}
		op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 3, i: i}, tape)
		if err := op.Restore(ctx, readers(blobs), 128, state.RangeOf(128, 3, i)); err != nil {
			t.Fatal(err)
		}
		n, enc := op.Store().Entries(0)
		if n != 2 || string(enc) != "\x03\x00\x00\x00any\x01\x00\x00\x000\x03\x00\x00\x00big\x03\x00\x00\x00100" {
			t.Fatalf("subtask %d: broadcast state %d entries %q", i, n, enc)
		}
		if keys := mine(3, i); len(keys) > 0 {
			if err := run(t, op, in, []optest.JoinStep{events(keys, 5, 120)}); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, tape.Lines...)
	}
	sort.Strings(got)
	var want []string
	for _, u := range users {
		want = append(want,
			fmt.Sprintf(`%s@5 {"user":"%s","rule":"any","amount":120,"hits":3}`, u, u),
			fmt.Sprintf(`%s@5 {"user":"%s","rule":"big","amount":120,"hits":4}`, u, u))
	}
	sort.Strings(want)
	optest.CheckLines(t, "after the restore", got, want)
}

// A snapshot restores into a subtask of the same module as it was, and a
// damaged or foreign one is an error that says so.
func TestBroadcastRestoreRejects(t *testing.T) {
	ctx := context.Background()
	op, in := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, &optest.Tape{})
	if err := run(t, op, in, []optest.JoinStep{`R @1 {"rule":"a","min":1}`, `L u1@2 {"amount":3}`}); err != nil {
		t.Fatal(err)
	}
	good := snapshotBytes(t, op)
	renamed := appendSection(nil, []captured{{name: "other", entries: 0}})
	tests := []struct {
		name string
		blob []byte
		want string
	}{
		{"truncated header", good[:6], "damaged broadcast state snapshot: header"},
		{"not ours", append([]byte("XXXX"), good[4:]...), "not a broadcast operator's snapshot"},
		{"entries cut short", good[:len(good)-20][:30], "damaged broadcast state snapshot"},
		{"unknown state", renamed, `the snapshot has broadcast state "other", which the module does not declare`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, _ := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, &optest.Tape{})
			err := fresh.Restore(ctx, readers([][]byte{tt.blob}), 128, state.RangeOf(128, 1, 0))
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	restored, _ := newOp(t, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, &optest.Tape{})
	if err := restored.Restore(ctx, readers([][]byte{good}), 128, state.RangeOf(128, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if again := snapshotBytes(t, restored); !bytes.Equal(again[:len(appendSection(nil, restored.store.capture()))], good[:len(appendSection(nil, op.store.capture()))]) {
		t.Fatal("the restored broadcast state differs")
	}
}

// FuzzReadSection: any bytes decode into broadcast states or fail with
// ErrDamaged, never panic, and what decodes encodes back the same.
func FuzzReadSection(f *testing.F) {
	f.Add(appendSection(nil, []captured{{name: "rules", entries: 1, enc: []byte("\x01\x00\x00\x00a\x01\x00\x00\x001")}}))
	f.Add(appendSection(nil, nil))
	f.Add([]byte("BCST\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		states, err := readSection(bytes.NewReader(data), 1<<20)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("error %v is not ErrDamaged", err)
			}
			return
		}
		enc := appendSection(nil, states)
		if !bytes.Equal(enc, data[:len(enc)]) {
			t.Fatalf("re-encoded %q, read from %q", enc, data)
		}
		s := NewStore([]abi.State{{Name: "rules", Kind: abi.StateMap, Broadcast: true}}, 1<<20)
		_ = s.load(states)
	})
}

// BenchmarkBroadcastKeyed measures the keyed side: events of 10,000 users
// matched by the rules module against no rules, and against 8 rules of
// which an event meets 0 to 8 (4.5 matches per event, each one output).
func BenchmarkBroadcastKeyed(b *testing.B) {
	for _, n := range []int{0, 8} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			op, in := newOp(b, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, &optest.Count{})
			var rules []string
			for i := 0; i < n; i++ {
				rules = append(rules, fmt.Sprintf(`@1 {"rule":"r%d","min":%d}`, i, i*100))
			}
			if n > 0 {
				if err := run(b, op, in, []optest.JoinStep{optest.JoinStep("R " + joinSemi(rules))}); err != nil {
					b.Fatal(err)
				}
			}
			in.From(0)
			optest.Bench(b, op, 10_000, 100, nil)
		})
	}
}

// BenchmarkBroadcastSide measures the broadcast side: batches of rule
// updates over 64 rule names.
func BenchmarkBroadcastSide(b *testing.B) {
	op, in := newOp(b, opConfig{module: "rules", process: "match", broadcast: "update", p: 1}, &optest.Count{})
	const batch = 256
	recs := make([]abi.Record, batch)
	for i := range recs {
		recs[i] = abi.Record{Value: fmt.Appendf(nil, `{"rule":"r%02d","min":%d}`, i%64, i)}
	}
	in.From(1)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		if err := op.Process(ctx, recs[:min(batch, b.N-n)]); err != nil {
			b.Fatal(err)
		}
	}
}

var _ operator.Stateful = (*Operator)(nil)
