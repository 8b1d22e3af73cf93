package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"wasmstream.io/platform/abi"
)

// TestCallFailures makes each kind of guest failure happen, checks how it is
// reported, and that the next Call runs on a fresh instance.
func TestCallFailures(t *testing.T) {
	wasm := fixture(t, "udf")
	tests := []struct {
		name   string
		cfg    InstanceConfig
		fn     int
		input  []abi.Record
		kind   ErrorKind
		detail string
	}{
		{
			name:   "trap on poison",
			fn:     fnUpper,
			input:  values("fine", "poison", "never"),
			kind:   KindTrap,
			detail: "wasm error: unreachable",
		},
		{
			name:   "deadline",
			cfg:    InstanceConfig{CallTimeout: 100 * time.Millisecond},
			fn:     fnSpin,
			input:  values("x"),
			kind:   KindDeadline,
			detail: "call timeout 100ms: module closed with context canceled",
		},
		{
			name:   "memory limit",
			cfg:    InstanceConfig{MemoryLimit: 2 << 20},
			fn:     fnBomb,
			input:  values("x"),
			kind:   KindMemoryLimit,
			detail: "memory 2097152 bytes, limit 2097152: wasm error: unreachable",
		},
		{
			name:   "memory limit rounds down to pages",
			cfg:    InstanceConfig{MemoryLimit: 2<<20 + pageSize - 1},
			fn:     fnBomb,
			input:  values("x"),
			kind:   KindMemoryLimit,
			detail: "memory 2097152 bytes, limit 2097152: wasm error: unreachable",
		},
		{
			name:   "bad output",
			fn:     fnBadOut,
			input:  values("x"),
			kind:   KindBadOutput,
			detail: "output [4294901760, 4294901760) outside memory of 131072 bytes",
		},
		{
			name:   "exit",
			fn:     fnExit,
			input:  values("x"),
			kind:   KindExit,
			detail: "module closed with exit_code(3)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHost(t, "")
			ctx := context.Background()
			m, err := h.Compile(ctx, wasm)
			if err != nil {
				t.Fatal(err)
			}
			p := newPool(t, m, tt.cfg)
			if _, err := p.Call(ctx, fnUpper, inputFrame(values("warm")...)); err != nil {
				t.Fatal(err)
			}
			_, err = p.Call(ctx, tt.fn, inputFrame(tt.input...))
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want *CallError", err, err)
			}
			name := m.Description.Functions[tt.fn].Name
			if ce.Module != m.ID || ce.Function != name || ce.Kind != tt.kind {
				t.Fatalf("error %q: module %s function %s kind %s, want %s %s %s", err, ce.Module, ce.Function, ce.Kind, m.ID, name, tt.kind)
			}
			prefix := fmt.Sprintf("udf[%s] function[%s]: %s: ", m.ID, name, tt.kind)
			if !strings.HasPrefix(err.Error(), prefix+tt.detail) {
				t.Fatalf("error %q, want it to start with %q", err, prefix+tt.detail)
			}
			if n := p.MemoryBytes(); n != 0 {
				t.Fatalf("memory %d after the failure, want 0 (instance discarded)", n)
			}
			out, err := p.Call(ctx, fnUpper, inputFrame(values("again")...))
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeOutput(t, out, 1); string(got[0].Value) != "AGAIN" {
				t.Fatalf("after recovery: %q", got[0].Value)
			}
			if n := p.Instantiations(); n != 2 {
				t.Fatalf("instantiations %d, want 2", n)
			}
		})
	}
}

func TestExitErrorUnwraps(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{})
	_, err := p.Call(context.Background(), fnExit, inputFrame(values("x")...))
	var exit *sys.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("error %v, want a *sys.ExitError with code 3", err)
	}
}

// TestMemoryLimitBelowModuleMinimum: a limit smaller than the memory the
// module declares fails before instantiating.
func TestMemoryLimitBelowModuleMinimum(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{MemoryLimit: pageSize})
	_, err := p.Call(context.Background(), fnUpper, inputFrame(values("x")...))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindMemoryLimit {
		t.Fatalf("error %v, want a memory_limit *CallError", err)
	}
	want := fmt.Sprintf("udf[%s] function[upper]: memory_limit: module needs 131072 bytes of memory, limit 65536", m.ID)
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if n := p.Instantiations(); n != 0 {
		t.Fatalf("instantiations %d, want 0", n)
	}
}

func TestCallRejects(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	closed := m.NewGuest(InstanceConfig{})
	if err := closed.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pool *Guest
		ctx  context.Context
		fn   int
		want string
	}{
		{"function below range", newPool(t, m, InstanceConfig{}), context.Background(), -1, "function -1 of 7"},
		{"function above range", newPool(t, m, InstanceConfig{}), context.Background(), 7, "function 7 of 7"},
		{"cancelled context", newPool(t, m, InstanceConfig{}), cancelled, fnUpper, "context canceled"},
		{"closed pool", closed, context.Background(), fnUpper, "guest closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.pool.Call(tt.ctx, tt.fn, inputFrame(values("x")...))
			if want := fmt.Sprintf("udf[%s]: %s", m.ID, tt.want); err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if n := tt.pool.Instantiations(); n != 0 {
				t.Fatalf("instantiations %d, want 0", n)
			}
		})
	}
}
