package udfs

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"wasmstream.io/platform/abi"
)

func values(vs ...string) []abi.Record {
	recs := make([]abi.Record, len(vs))
	for i, v := range vs {
		recs[i] = abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: int64(i)}
	}
	return recs
}

func passed(index uint32, v string) abi.Entry {
	return abi.Entry{Tag: abi.TagRecord, Index: index, Value: []byte(v)}
}

func TestFaultyPassesOtherValues(t *testing.T) {
	in := instantiate(t, "faulty-wat")
	for _, fn := range []string{"poison", "reject", "spin", "bomb"} {
		t.Run(fn, func(t *testing.T) {
			got, err := in.run(context.Background(), fn, values("a", "poisonous", "spi", "bombs"))
			if err != nil {
				t.Fatal(err)
			}
			want := []abi.Entry{passed(0, "a"), passed(1, "poisonous"), passed(2, "spi"), passed(3, "bombs")}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestFaultyReject(t *testing.T) {
	in := instantiate(t, "faulty-wat")
	got, err := in.run(context.Background(), "reject", values("ok", "poison", "x"))
	if err != nil {
		t.Fatal(err)
	}
	want := []abi.Entry{passed(0, "ok"), {Tag: abi.TagError, Index: 1, Message: []byte("rejected poison")}, passed(2, "x")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestFaultyTraps checks that poison and bomb trap on their trigger, which
// fails the whole call, and that bomb first grew memory to the limit.
func TestFaultyTraps(t *testing.T) {
	tests := []struct {
		fn     string
		memory uint32
	}{
		{"poison", 2 << 16},
		{"bomb", memoryLimitPages << 16},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			in := instantiate(t, "faulty-wat")
			_, err := in.run(context.Background(), tt.fn, values("a", tt.fn, "b"))
			if err == nil || !strings.Contains(err.Error(), "wasm error: unreachable") {
				t.Fatalf("err = %v, want an unreachable trap", err)
			}
			if got := in.mod.Memory().Size(); got != tt.memory {
				t.Fatalf("memory is %d bytes, want %d", got, tt.memory)
			}
		})
	}
}

// TestFaultySpin checks that spin runs until the call's deadline stops it.
func TestFaultySpin(t *testing.T) {
	in := instantiate(t, "faulty-wat")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := in.run(ctx, "spin", values("a", "spin"))
	var exit *sys.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != sys.ExitCodeDeadlineExceeded {
		t.Fatalf("err = %v, want a deadline exit", err)
	}
}
