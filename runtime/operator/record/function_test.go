package record

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator"
)

// collectSink keeps copies of the values that reach it.
type collectSink struct{ values []string }

func (c *collectSink) Process(_ context.Context, recs []abi.Record) error {
	for _, r := range recs {
		c.values = append(c.values, string(r.Value))
	}
	return nil
}
func (c *collectSink) Advance(context.Context, int64) error { return nil }
func (c *collectSink) Tick(context.Context, int64) error    { return nil }
func (c *collectSink) Finish(context.Context) error         { return nil }
func (c *collectSink) Close(context.Context) error          { return nil }

func newTestHost(t *testing.T) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), host.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func newWasmOp(t *testing.T, mod *host.Module, function, policy string, next operator.Stage) (operator.Stage, *operator.ErrorCounts) {
	t.Helper()
	i := mod.Description.Lookup(function)
	if i < 0 {
		t.Fatalf("no function %s", function)
	}
	c := &operator.ErrorCounts{}
	op := NewFunction(mod.Description.Functions[i].Kind, mod.ID, function, i, mod.NewGuest(host.InstanceConfig{}), 1024,
		&operator.ErrorPolicy{Mode: policy, Vertex: "op", Counts: c, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, next)
	t.Cleanup(func() { _ = op.Close(context.Background()) })
	return op, c
}

// TestOutputRules feeds one record to functions that each break one rule of
// docs/ABI.md's output frames, and checks what the operator makes of it.
func TestOutputRules(t *testing.T) {
	h := newTestHost(t)
	mod, err := h.Compile(context.Background(), wasmbuild.Dir(t, "testdata/abirules"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		function string
		// badOutput: the call is an ABI violation, which fails the record
		// (policy fail) with a bad_output error.
		badOutput string
		// failed: the record fails with this guest-reported message.
		failed string
	}{
		{function: "twice", badOutput: "wrote 2 entries for input 0"},
		{function: "errafter", failed: "udf[" + mod.ID + "] function[errafter]: no"},
		{function: "silent", badOutput: "answered 0 of 1 records"},
		{function: "badtag", badOutput: "filter function wrote a key entry"},
		{function: "frameerr", badOutput: "frame failed: boom"},
		{function: "outside", badOutput: "outside memory"},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			sink := &collectSink{}
			op, c := newWasmOp(t, mod, tt.function, operator.OnErrorFail, sink)
			err := op.Process(context.Background(), []abi.Record{{Value: []byte("x")}})
			var rerr *operator.RecordError
			if !errors.As(err, &rerr) {
				t.Fatalf("err %v, want a *operator.RecordError", err)
			}
			if len(sink.values) != 0 || c.UDFErrors.Load() != 1 {
				t.Fatalf("outputs %q, udf errors %d", sink.values, c.UDFErrors.Load())
			}
			if tt.failed != "" {
				if rerr.Err.Error() != tt.failed {
					t.Fatalf("error %q, want %q", rerr.Err, tt.failed)
				}
				return
			}
			var callErr *host.CallError
			if !errors.As(err, &callErr) || callErr.Kind != host.KindBadOutput || !strings.Contains(err.Error(), tt.badOutput) {
				t.Fatalf("error %v, want bad_output mentioning %q", err, tt.badOutput)
			}
		})
	}
}

// TestTrapIsolatesThePoisonRecord runs a batch whose middle record traps:
// under skip, every other record comes out once, in order.
func TestTrapIsolatesThePoisonRecord(t *testing.T) {
	h := newTestHost(t)
	mod, err := h.Compile(context.Background(), wasmbuild.UDF(t, "faulty-wat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, function := range []string{"poison", "reject"} {
		t.Run(function, func(t *testing.T) {
			sink := &collectSink{}
			op, c := newWasmOp(t, mod, function, operator.OnErrorSkip, sink)
			in := []abi.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("poison")}, {Value: []byte("c")}}
			if err := op.Process(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sink.values, ","); got != "a,b,c" || c.Skipped.Load() != 1 {
				t.Fatalf("outputs %q, skipped %d", got, c.Skipped.Load())
			}
		})
	}
}
