package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/state"
)

// Functions of testdata/state.wat.
const (
	fnRoundtrip = 0
	fnOOB       = 1
	fnDomain    = 2
	fnEnter     = 3
	fnGetPut    = 4
)

// keyedEnv is an Env over real keyed state: group i is key
// keys[(base+i) % len(keys)].
type keyedEnv struct {
	k      *state.Keyed
	keys   [][]byte
	base   int
	timers []string
}

var errNoGroup = errors.New("no such group")

func newKeyedEnv(t testing.TB, descs []state.Descriptor, keys ...string) *keyedEnv {
	t.Helper()
	k, err := state.Open(state.Config{MaxParallelism: 128, Range: state.Range{First: 0, Last: 127}, States: descs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	e := &keyedEnv{k: k}
	for _, key := range keys {
		e.keys = append(e.keys, []byte(key))
	}
	return e
}

func (e *keyedEnv) Enter(g uint32) error {
	if int(g) >= len(e.keys) {
		return fmt.Errorf("group %d of %d: %w", g, len(e.keys), errNoGroup)
	}
	return e.k.SetKey(e.keys[(e.base+int(g))%len(e.keys)])
}
func (e *keyedEnv) ValueGet(s uint32) ([]byte, bool, error)         { return e.k.Value(int(s)) }
func (e *keyedEnv) ValueSet(s uint32, v []byte) error               { return e.k.SetValue(int(s), v) }
func (e *keyedEnv) Clear(s uint32) error                            { return e.k.Clear(int(s)) }
func (e *keyedEnv) ListAppend(s uint32, v []byte) error             { return e.k.Append(int(s), v) }
func (e *keyedEnv) ListGet(s uint32) (int, []byte, error)           { return e.k.List(int(s)) }
func (e *keyedEnv) MapGet(s uint32, k []byte) ([]byte, bool, error) { return e.k.MapGet(int(s), k) }
func (e *keyedEnv) MapPut(s uint32, k, v []byte) error              { return e.k.MapPut(int(s), k, v) }
func (e *keyedEnv) MapRemove(s uint32, k []byte) error              { return e.k.MapRemove(int(s), k) }
func (e *keyedEnv) MapEntries(s uint32) (int, []byte, error)        { return e.k.MapEntries(int(s)) }
func (e *keyedEnv) RegisterTimer(d abi.TimeDomain, ts int64) error {
	e.timers = append(e.timers, fmt.Sprintf("register %d %d", d, ts))
	return nil
}
func (e *keyedEnv) DeleteTimer(d abi.TimeDomain, ts int64) error {
	e.timers = append(e.timers, fmt.Sprintf("delete %d %d", d, ts))
	return nil
}

var stateDescs = []state.Descriptor{{Name: "v", Kind: state.KindValue}, {Name: "l", Kind: state.KindList}, {Name: "m", Kind: state.KindMap}}

func TestStateImportsRoundTrip(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "state")
	if got := m.Description.States; len(got) != 3 || got[2] != (abi.State{Name: "m", Kind: "map", TTL: "1h"}) {
		t.Fatalf("declared states %+v", got)
	}
	p := newPool(t, m, InstanceConfig{})
	env := newKeyedEnv(t, stateDescs, "user-1")
	value := []byte("hello")
	out, err := p.CallWith(context.Background(), fnRoundtrip, value, env)
	if err != nil {
		t.Fatal(err)
	}
	results := make([]int32, 8)
	for i := range results {
		results[i] = int32(binary.LittleEndian.Uint32(out[4*i:]))
	}
	if want := []int32{-1, 5, 5, 4 + 4 + 5 + 4 + 1, 5, 4 + 4 + 1 + 4 + 5, -1, -1}; !reflect.DeepEqual(results, want) {
		t.Fatalf("results %v, want %v", results, want)
	}
	buf := func(i, n int) []byte { return out[4096+256*i : 4096+256*i+n] }
	list := []byte("\x02\x00\x00\x00\x05\x00\x00\x00hello\x01\x00\x00\x00h")
	entries := []byte("\x01\x00\x00\x00\x01\x00\x00\x00h\x05\x00\x00\x00hello")
	for i, want := range [][]byte{value, list, value, entries} {
		if got := buf(i, len(want)); !bytes.Equal(got, want) {
			t.Errorf("buffer %d: %q, want %q", i, got, want)
		}
	}
	if want := []string{"register 1 42", "delete 0 -7"}; !reflect.DeepEqual(env.timers, want) {
		t.Fatalf("timers %q, want %q", env.timers, want)
	}
}

func TestStateImportsTrapCleanly(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "state")
	p := newPool(t, m, InstanceConfig{})
	ctx := context.Background()
	env := newKeyedEnv(t, stateDescs, "user-1")
	tests := []struct {
		name    string
		fn      int
		frame   []byte
		env     Env
		message string
		is      error
	}{
		{"no env", fnRoundtrip, []byte("x"), nil, "platform.enter: state and timer imports are only available to keyed functions", errNoEnv},
		{"pointer outside memory", fnOOB, nil, env, "platform.value_set: [4294967280, 4294967380) is outside memory of 131072 bytes", nil},
		{"bad time domain", fnDomain, nil, env, "platform.timer_register: time domain 7: want 0 (event time) or 1 (processing time)", nil},
		{"env error", fnEnter, []byte{9, 0, 0, 0}, env, "platform.enter: group 9 of 1: no such group", errNoGroup},
		{"state error", fnRoundtrip, []byte("x"), newKeyedEnv(t, stateDescs[:1], "user-1"), `platform.list_append: state: no state 1 (1 declared)`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.CallWith(ctx, tc.fn, tc.frame, tc.env)
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("got %v, want a trap with %q", err, tc.message)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("%v does not wrap %v", err, tc.is)
			}
			if _, err := p.CallWith(ctx, fnEnter, []byte{0, 0, 0, 0}, env); err != nil {
				t.Fatalf("the next call: %v", err)
			}
		})
	}
}

// A value larger than the guest's buffer is kept for the retry, which sees
// the same bytes even when reading had effects (here: the entry expired and
// was removed by the first read).
func TestStateImportsRetryKeepsTheResult(t *testing.T) {
	now := int64(0)
	k, err := state.Open(state.Config{MaxParallelism: 128, Range: state.Range{First: 0, Last: 127},
		States: []state.Descriptor{{Name: "v", Kind: state.KindValue, TTL: state.TTL{TTL: 1e6, Visibility: state.ReturnExpiredIfNotCleanedUp}}},
		Clock:  state.ClockFunc(func() int64 { return now }), CleanupSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.SetKey([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := k.SetValue(0, []byte("expiring")); err != nil {
		t.Fatal(err)
	}
	now = 10
	inst := &instance{}
	small, big := make([]byte, 3), make([]byte, 64)
	v, ok, err := k.Value(0)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if n := int32(inst.deliver(abi.ImportValueGet, 0, nil, small, false, 0, v)); n != 8 {
		t.Fatalf("first read: %d", n)
	}
	if _, ok, _ := k.Value(0); ok {
		t.Fatal("the expired value is still stored")
	}
	n, ok := inst.retried(abi.ImportValueGet, 0, nil, big)
	if !ok || int32(n) != 8 || string(big[:8]) != "expiring" {
		t.Fatalf("retry: %d %v %q", int32(n), ok, big[:8])
	}
	if _, ok := inst.retried(abi.ImportValueGet, 0, nil, big); ok {
		t.Fatal("a delivered result was kept")
	}
}

func TestStateImportsAllocateNothing(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "state")
	p := newPool(t, m, InstanceConfig{})
	env := newKeyedEnv(t, stateDescs, "a", "b", "c", "d")
	frame := []byte{4, 0, 0, 0}
	ctx := context.Background()
	if _, err := p.CallWith(ctx, fnGetPut, frame, env); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.CallWith(ctx, fnGetPut, frame, env); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call of 4 gets and 4 puts", allocs)
	}
}

// BenchmarkStateGetPut is a value state get and put through the ABI: one
// call enters 1024 groups in turn, each reading and writing 8 bytes of its
// key's state. The keys cycle through a key space of 1024 (every call
// touches the same keys), 100,000 or 2,000,000 (more than the Pebble
// backend's cache holds).
func BenchmarkStateGetPut(b *testing.B) {
	for _, backend := range []string{state.BackendMemory, state.BackendPebble} {
		for _, keys := range []int{1024, 100_000, 2_000_000} {
			b.Run(fmt.Sprintf("%s/keys=%d", backend, keys), func(b *testing.B) {
				h, _ := newHost(b, "")
				m := compileFixture(b, h, "state")
				p := newPool(b, m, InstanceConfig{})
				const groups = 1024
				k, err := state.Open(state.Config{Backend: backend, Dir: b.TempDir() + "/db", MaxParallelism: 128,
					Range: state.Range{First: 0, Last: 127}, States: stateDescs})
				if err != nil {
					b.Fatal(err)
				}
				defer k.Close()
				env := &keyedEnv{k: k}
				for i := range keys {
					env.keys = append(env.keys, fmt.Appendf(nil, "user-%06d", i))
				}
				frame := binary.LittleEndian.AppendUint32(nil, groups)
				ctx := context.Background()
				for env.base = 0; env.base < keys; env.base += groups {
					if _, err := p.CallWith(ctx, fnGetPut, frame, env); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					env.base = (env.base + 7*groups + 1) % keys
					if _, err := p.CallWith(ctx, fnGetPut, frame, env); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(2*groups*b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		}
	}
}
