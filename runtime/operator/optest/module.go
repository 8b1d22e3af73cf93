package optest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/operator"
)

var (
	hostOnce sync.Once
	shared   *host.Host
	hostErr  error
	modules  sync.Map
)

// Host is a host shared by the test binary, which lives as long as it.
func Host(t testing.TB) *host.Host {
	t.Helper()
	hostOnce.Do(func() {
		shared, hostErr = host.New(context.Background(), host.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	})
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	return shared
}

// Module compiles the module of udfs/NAME (avg, sessions, avg-c, ...) once
// for the test binary.
func Module(t testing.TB, name string) *host.Module {
	t.Helper()
	if m, ok := modules.Load(name); ok {
		return m.(*host.Module)
	}
	wasm := wasmbuild.UDF(t, name)
	m, err := Host(t).Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	modules.Store(name, m)
	return m
}

// GroupCall is the grouped call of a module's function, on a guest of its
// own that the test closes.
func GroupCall(t testing.TB, mod *host.Module, function string) operator.GroupCall {
	t.Helper()
	i := mod.Description.Lookup(function)
	if i < 0 {
		t.Fatalf("module %s has no function %s", mod.ID, function)
	}
	g := mod.NewGuest(host.InstanceConfig{})
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	return operator.GroupCall{Module: mod.ID, Function: function, Fn: i, Guest: g}
}

// FailPolicy is on_udf_error: fail for vertex, with its counts.
func FailPolicy(vertex string) (*operator.ErrorPolicy, *operator.ErrorCounts) {
	c := &operator.ErrorCounts{}
	return &operator.ErrorPolicy{Mode: operator.OnErrorFail, Vertex: vertex, Counts: c, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, c
}
