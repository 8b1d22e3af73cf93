package exchange

import (
	"context"
	"testing"

	"wasmstream.io/platform/abi"
)

func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults(3)
	want := Config{BufferSize: 32 << 10, ExclusivePerChannel: 2, FloatingPerGate: 8, BuffersPerWriter: 11, MaxRecordSize: 8 << 20}
	if got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	set := Config{BufferSize: 64, ExclusivePerChannel: 1, FloatingPerGate: 3, BuffersPerWriter: 4, BufferTimeout: -1, MaxRecordSize: 10}
	if got := set.withDefaults(3); got != set {
		t.Fatalf("set fields changed: %+v, want %+v", got, set)
	}
}

func TestMisuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"negative size", func() { NewEdge(Config{FloatingPerGate: -1}, 1, 1) }, "exchange: Config.FloatingPerGate is -1, want >= 0"},
		{"tiny buffer", func() { NewEdge(Config{BufferSize: 8}, 1, 1) }, "exchange: Config.BufferSize is 8, want >= 16"},
		{"pool below channels", func() { NewEdge(Config{BuffersPerWriter: 2}, 1, 3) }, "exchange: Config.BuffersPerWriter is 2, want >= 3 (one per channel)"},
		{"channel in two gates", func() {
			e := NewEdge(Config{}, 2, 1)
			NewGate(Config{}, e.Channels(0))
			NewGate(Config{}, e.Channels(0)[1:])
		}, "exchange: input channel already is channel 1 of another gate"},
		{"send without gate", func() {
			_ = NewEdge(Config{}, 1, 1).Writer(0).Emit(context.Background(), 0, &abi.Record{})
		}, "exchange: a writer sent before NewGate took its channel"},
		{"recycle twice", func() {
			e := NewEdge(Config{}, 1, 1)
			g := NewGate(Config{}, e.Channels(0))
			_ = e.Writer(0).Emit(context.Background(), 0, &abi.Record{})
			b, _ := g.Next(context.Background())
			b.Recycle()
			b.Recycle()
		}, "exchange: buffer recycled twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != tc.want {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}
