package host

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/wasmbuild"
)

// TestInstrumentKeepsBehaviour runs every module the repository builds,
// as built and instrumented, over the same frames, and checks that each
// call gives the same output frame or fails with the same error (some
// functions trap on "poison" or "crash", or exit).
func TestInstrumentKeepsBehaviour(t *testing.T) {
	modules := []struct {
		name string
		wasm func(testing.TB) []byte
		// skip are functions that never return, or only at the memory
		// limit.
		skip []string
	}{
		{"testdata/udf", func(tb testing.TB) []byte { return fixture(tb, "udf") }, []string{"spin", "bomb"}},
		{"testdata/gomod", goModuleWasm, []string{"hoard", "spin"}},
		{"udfs/upper", udf("upper"), nil},
		{"udfs/upper-wat", udf("upper-wat"), nil},
		{"udfs/wordcount", udf("wordcount"), nil},
		{"udfs/faulty-wat", udf("faulty-wat"), nil},
		{"udfs/kinds", udf("kinds"), nil},
	}
	frames := [][]byte{
		inputFrame(values("hello", "Wasm World", "", "a,b,c", "1700000000000")...),
		inputFrame(abi.Record{Key: []byte("k"), Value: []byte("poison"), Timestamp: 9,
			Headers: []abi.Header{{Name: []byte("h"), Value: []byte("v")}}}),
		inputFrame(values("crash", "a,!,b", "not a number", "the quick brown fox jumps over the lazy dog")...),
		inputFrame(),
	}
	failures := 0
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) {
			wasm := mod.wasm(t)
			instrumented, err := instrument(wasm)
			if err != nil {
				t.Fatal(err)
			}
			rt := rawRuntime(t, false)
			ctx := context.Background()
			plain, guarded := newRawGuest(t, ctx, rt, wasm), newRawGuest(t, ctx, rt, instrumented)
			desc := plain.describe(t)
			calls := 0
			for fn, f := range desc.Functions {
				if slices.Contains(mod.skip, f.Name) {
					continue
				}
				for i, frame := range frames {
					want, werr := plain.run(fn, frame)
					got, gerr := guarded.run(fn, frame)
					calls++
					if werr != nil || gerr != nil {
						if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
							t.Fatalf("%s, frame %d: error %v, want %v", f.Name, i, gerr, werr)
						}
						failures++
						plain, guarded = newRawGuest(t, ctx, rt, wasm), newRawGuest(t, ctx, rt, instrumented)
						continue
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s, frame %d: output %x, want %x", f.Name, i, got, want)
					}
				}
			}
			if calls == 0 {
				t.Fatal("no function called")
			}
		})
	}
	if failures == 0 {
		t.Fatal("no call failed: the comparison of errors went untested")
	}
}

func udf(name string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return wasmbuild.UDF(tb, name) }
}
