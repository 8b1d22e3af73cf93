package host

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// Functions for modules that run too long, added to minimalWAT: $now reads
// the monotonic clock, $wall the real-time clock, through WASI;
// $spin_later spins on the clock for 100 ms, then loops for ever.
const clockWAT = `
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (func $read (param $id i32) (result i64)
    (drop (call $clock (local.get $id) (i64.const 0) (i32.const 4096)))
    (i64.load (i32.const 4096)))
  (func $now (result i64) (call $read (i32.const 1)))
  (func $wall (result i64) (call $read (i32.const 0)))
  (func $forever (loop $l (br $l)))
  (func $spin_later (local $t0 i64)
    (local.set $t0 (call $now))
    (loop $wait (br_if $wait (i64.lt_u (i64.sub (call $now) (local.get $t0)) (i64.const 100000000))))
    (call $forever))`

// guestWAT is minimalWAT with the clock functions and extra declarations,
// and its edits applied.
func guestWAT(t *testing.T, decls string, edits ...edit) []byte {
	t.Helper()
	src := strings.Replace(minimalWAT, "(module\n", "(module\n"+clockWAT+"\n"+decls+"\n", 1)
	for _, e := range edits {
		if strings.Count(src, e.old) != 1 {
			t.Fatalf("edit %q does not match once", e.old)
		}
		src = strings.Replace(src, e.old, e.new, 1)
	}
	return buildWAT(t, "module", []byte(src))
}

// settled waits until no more goroutines run than before, and fails the
// test if that takes more than 2 s.
func settled(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// idle checks that the process uses little CPU over 300 ms: a guest left
// spinning would use one core all along.
func idle(t *testing.T) {
	t.Helper()
	start, ok := processCPU()
	if !ok {
		return
	}
	const wait = 300 * time.Millisecond
	time.Sleep(wait)
	end, _ := processCPU()
	if used := end - start; used > wait/2 {
		t.Fatalf("the process used %s of CPU in %s while idle", used, wait)
	}
}

// TestValidationRunsUnderDeadline: every guest instruction that validation
// runs, from the start section on, is stopped at the validation deadline,
// and the module is refused with the step that ran too long; nothing keeps
// running afterwards. Modules that pass show that the start function still
// runs first.
func TestValidationRunsUnderDeadline(t *testing.T) {
	h, _ := newHost(t, "")
	h.validateTimeout = 300 * time.Millisecond
	late := "did not return within the validation deadline of 300ms"
	tests := []struct {
		name     string
		decls    string
		edits    []edit
		problems []string // nil: valid
	}{
		{
			name:     "start section loops at once",
			decls:    `(start $forever)`,
			problems: []string{"deadline in start function: " + late},
		},
		{
			name:     "start section loops after 100ms of reading the clock",
			decls:    `(start $spin_later)`,
			problems: []string{"deadline in start function: " + late},
		},
		{
			name:     "_initialize loops",
			decls:    `(export "_initialize" (func $forever))`,
			problems: []string{"deadline in _initialize: " + late},
		},
		{
			name:     "_initialize loops after 100ms",
			decls:    `(export "_initialize" (func $spin_later))`,
			problems: []string{"deadline in _initialize: " + late},
		},
		{
			name:     "self-description loops",
			edits:    []edit{{`(result i64) (i64.const 49)`, `(result i64) (call $forever) (i64.const 49)`}},
			problems: []string{"deadline in platform_describe: " + late},
		},
		{
			name:     "abi version loops",
			edits:    []edit{{`(result i32) (i32.const 1)`, `(result i32) (call $spin_later) (i32.const 1)`}},
			problems: []string{"deadline in platform_abi_version: " + late},
		},
		{
			name:     "start section traps",
			decls:    `(start $trap) (func $trap unreachable)`,
			problems: []string{"trap in start function: wasm error: unreachable\nwasm stack trace:\n\t.$6()"},
		},
		{
			name: "start section runs before _initialize and the description",
			decls: `(global $g (mut i32) (i32.const 0))
  (start $set) (func $set (global.set $g (i32.const 49)))
  (func (export "_initialize") (if (i32.ne (global.get $g) (i32.const 49)) (then unreachable)))`,
			edits: []edit{{`(i64.const 49)`, `(i64.extend_i32_u (global.get $g))`}},
		},
		{
			name:  "start section that reads the clock for 100ms and returns",
			decls: `(start $wait) (func $wait (local $t0 i64) (local.set $t0 (call $now)) (loop $l (br_if $l (i64.lt_u (i64.sub (call $now) (local.get $t0)) (i64.const 100000000)))))`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm := guestWAT(t, tt.decls, tt.edits...)
			before := runtime.NumGoroutine()
			m, err := h.Compile(context.Background(), wasm)
			if tt.problems == nil {
				if err != nil {
					t.Fatal(err)
				}
				want := abi.Description{ABI: 1, Functions: []abi.Function{{Name: "f", Kind: abi.KindMap}}}
				if !reflect.DeepEqual(m.Description, want) {
					t.Fatalf("description %+v, want %+v", m.Description, want)
				}
				p := newPool(t, m, InstanceConfig{})
				if _, err := p.Call(context.Background(), 0, inputFrame()); err != nil {
					t.Fatal(err)
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, tt.problems) {
				t.Fatalf("error %v, want the problems %q", err, tt.problems)
			}
			settled(t, before)
			idle(t)
		})
	}
}

// TestInitializationRunsUnderCallDeadline: a start section or _initialize
// that loops only once the wall clock passes a time after the upload
// passes validation, and later fails each Call that needs a new instance
// at the call timeout, with a *CallError of KindDeadline; nothing keeps
// running afterwards.
func TestInitializationRunsUnderCallDeadline(t *testing.T) {
	tests := []struct {
		name, decls, step string
	}{
		{"start section", `(start $loop_late)`, startFunction},
		{"_initialize", `(export "_initialize" (func $loop_late))`, abi.ExportInitialize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHost(t, "")
			const delay = 500 * time.Millisecond
			from := time.Now().Add(delay)
			decls := fmt.Sprintf(`(func $loop_late (if (i64.ge_u (call $wall) (i64.const %d)) (then (call $forever))))`,
				from.UnixNano()) + "\n" + tt.decls
			m, err := h.Compile(context.Background(), guestWAT(t, decls))
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(from) {
				t.Skip("validation took longer than the delay")
			}
			time.Sleep(time.Until(from))
			before := runtime.NumGoroutine()
			p := m.NewGuest(InstanceConfig{CallTimeout: 200 * time.Millisecond})
			for range 2 {
				_, err = p.Call(context.Background(), 0, inputFrame())
				var ce *CallError
				want := fmt.Sprintf("udf[%s] function[f]: deadline: call timeout 200ms: %s: module closed with context canceled", m.ID, tt.step)
				if !errors.As(err, &ce) || ce.Kind != KindDeadline || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
			}
			if n := p.Instantiations(); n != 2 {
				t.Fatalf("%d instantiations, want 2", n)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			settled(t, before)
			idle(t)
		})
	}
}
