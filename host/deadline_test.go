package host

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// TestDeadlineDuringGC stops an endless loop while another goroutine
// collects garbage over and over. Compiled Wasm cannot be preempted: without
// the checks' periodic exit to Go, the first stop-the-world pause would
// wait for the guest forever, and the watchdog with it.
func TestDeadlineDuringGC(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	p := newPool(t, m, InstanceConfig{CallTimeout: 200 * time.Millisecond})
	ctx := context.Background()
	if _, err := p.Call(ctx, fnUpper, inputFrame(values("warm")...)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	})
	_, err := p.Call(ctx, fnSpin, inputFrame(values("x")...))
	close(done)
	wg.Wait()
	want := fmt.Sprintf("udf[%s] function[spin]: deadline: call timeout 200ms: module closed with context canceled", m.ID)
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

// TestValidationDeadline: an _initialize that never returns fails Compile
// when its context ends, as validateTimeout would.
func TestValidationDeadline(t *testing.T) {
	h, _ := newHost(t, "")
	src := strings.Replace(minimalWAT, "(module\n", "(module\n(func (export \"_initialize\") (loop $l (br $l)))\n", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := h.Compile(ctx, buildWAT(t, "spin", []byte(src)))
	want := []string{"deadline in _initialize: validation stopped: context deadline exceeded"}
	var verr *ValidationError
	if !errors.As(err, &verr) || !reflect.DeepEqual(verr.Problems, want) {
		t.Fatalf("error %v, want the problems %q", err, want)
	}
}

// TestHaltBeforeCall: an instance halted between calls fails its next call
// without running it.
func TestHaltBeforeCall(t *testing.T) {
	h, _ := newHost(t, "")
	m := compileFixture(t, h, "udf")
	ctx := context.Background()
	c, err := m.compiledFor(ctx, limitPages(DefaultMemoryLimit))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := c.instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close(ctx)
	inst.halt()
	kind, err := inst.invoke(abi.ExportVersion, []uint64{0}, h.now())
	if want := "platform_abi_version: call ran past its deadline"; kind != KindDeadline || err == nil || err.Error() != want {
		t.Fatalf("kind %s error %v, want %s %q", kind, err, KindDeadline, want)
	}
	if inst.stop.Get() != 1 {
		t.Fatalf("stop flag %d, want 1", inst.stop.Get())
	}
}
