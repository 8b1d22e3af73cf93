package udfs

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"

	"wasmstream.io/platform/abi"
)

// sdkLanguages are the suffixes of the modules written with the Rust, C and
// AssemblyScript SDKs that mirror a Go module: udfs/<name>-<suffix>.
var sdkLanguages = []string{"rust", "c", "as"}

// TestKindsAcrossLanguages runs the kinds module of every SDK language and
// checks that its output entries and log lines are exactly the Go module's,
// except where the README of the language's module says otherwise: a crash
// traps the call (neither Rust, C nor AssemblyScript unwinds inside
// WebAssembly), and a bad timestamp fails with the message "not a decimal
// number".
func TestKindsAcrossLanguages(t *testing.T) {
	h := abi.Header{Name: []byte("h"), Value: []byte("1")}
	rec := func(key, value string, ts int64, hs ...abi.Header) abi.Record {
		return abi.Record{Key: []byte(key), Value: []byte(value), Timestamp: ts, Headers: hs}
	}
	tests := []struct {
		function string
		in       []abi.Record
	}{
		{"swap", []abi.Record{rec("k", "v", 1, h), rec("", "", 0)}},
		{"delay", []abi.Record{rec("k", "v", 1, h), rec("", "x", -5000)}},
		{"annotate", []abi.Record{rec("k", "abc", 1, h), rec("", strings.Repeat("x", 1234), 2)}},
		{"crash", []abi.Record{rec("", "a", 1), rec("", "b", 3)}},
		{"log", []abi.Record{rec("k", "hello", 1), rec("k", "world", 2)}},
		{"nonempty", []abi.Record{rec("k", "", 1), rec("k", "x", 2, h)}},
		{"fields", []abi.Record{rec("k", "a,b", 1, h), rec("", "c,!,d", 2), rec("", "", 3), rec("", ",,", 4), rec("", "!!", 5)}},
		{"by_value", []abi.Record{rec("old", "new", 1), rec("old", "", 1)}},
		{"parse_time", []abi.Record{rec("", "1700000000000", 1), rec("", "-42", 2), rec("", "+7", 3), rec("", "9223372036854775807", 4)}},
		{"nonempty", nil},
	}
	ctx := context.Background()
	goKinds := instantiate(t, "kinds")
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "kinds-"+lang)
			if !reflect.DeepEqual(in.desc, goKinds.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goKinds.desc)
			}
			for _, tt := range tests {
				var wantLogs, gotLogs []string
				want, err := goKinds.run(context.WithValue(ctx, logsKey{}, &wantLogs), tt.function, tt.in)
				if err != nil {
					t.Fatal(err)
				}
				got, err := in.run(context.WithValue(ctx, logsKey{}, &gotLogs), tt.function, tt.in)
				if err != nil {
					t.Fatalf("%s: %v", tt.function, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got  %+v\nwant %+v", tt.function, got, want)
				}
				if !reflect.DeepEqual(gotLogs, wantLogs) {
					t.Errorf("%s: logs %q, want %q", tt.function, gotLogs, wantLogs)
				}
			}
		})
	}
}

// TestKindsLanguageDifferences checks what the SDK languages' kinds modules
// do differently from Go's, as their READMEs say.
func TestKindsLanguageDifferences(t *testing.T) {
	ctx := context.Background()
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "kinds-"+lang)
			got, err := in.run(ctx, "parse_time", []abi.Record{{Value: []byte("soon")}, {Value: []byte("12")}, {Value: []byte(" 1")}, {Value: []byte("9223372036854775808")}})
			if err != nil {
				t.Fatal(err)
			}
			failed := func(index uint32) abi.Entry {
				return abi.Entry{Tag: abi.TagError, Index: index, Message: []byte("not a decimal number")}
			}
			want := []abi.Entry{failed(0), {Tag: abi.TagTimestamp, Index: 1, Timestamp: 12}, failed(2), failed(3)}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parse_time: got %+v, want %+v", got, want)
			}
			if _, err := in.run(ctx, "crash", []abi.Record{{Value: []byte("a")}, {Value: []byte("crash")}}); err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Errorf("crash: %v, want a trap", err)
			}
		})
	}
}

// TestSDKsFailWholeFrame checks every SDK's answers to calls that break the
// ABI: each is one error entry for all records, with the Go SDK's message.
func TestSDKsFailWholeFrame(t *testing.T) {
	ctx := context.Background()
	good := frame([]abi.Record{{Value: []byte("v")}})
	tests := []struct {
		name     string
		index    uint32
		atRegion bool
		frame    []byte
		want     string
	}{
		{"unknown function", 9, true, good, "udf: no function with index 9; the module has 9"},
		{"outside the alloc region", 0, false, good, "udf: the input frame is not inside the region platform_alloc returned"},
		{"malformed frame", 0, true, good[:len(good)-2], "malformed frame at byte 21: want 4 bytes, have 2"},
		{"trailing bytes", 0, true, append(append([]byte(nil), good...), 0), "malformed frame at byte 25: 1 trailing bytes after 1 records"},
		{"short count", 0, true, []byte{1, 0}, "malformed frame at byte 0: want 4 bytes, have 2"},
	}
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "kinds-"+lang)
			res, err := in.alloc.Call(ctx, uint64(len(good)+1))
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				ptr := uint32(res[0])
				if !tt.atRegion {
					ptr = 16
				}
				got, err := in.callAt(ctx, tt.index, ptr, tt.frame, 1)
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				want := []abi.Entry{{Tag: abi.TagError, Index: abi.AllRecords, Message: []byte(tt.want)}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %+v, want %+v", tt.name, got, want)
				}
			}
		})
	}
}

// wordcountInputs are values that cover the word rule: every Unicode scalar
// value, in runs of 2048, and every byte pair after a byte of 0x80 or more
// in positions that make valid, truncated and invalid UTF-8.
func wordcountInputs() [][]byte {
	var values [][]byte
	var b []byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) {
			b = utf8.AppendRune(b, r)
		}
		if r%2048 == 2047 {
			values = append(values, b)
			b = nil
		}
	}
	for b0 := 0x80; b0 <= 0xff; b0++ {
		for b1 := 0; b1 <= 0xff; b1++ {
			values = append(values, []byte{'X', byte(b0), byte(b1), 'y', byte(b0), byte(b1), byte(b1), 'Z', byte(b0), byte(b1), 0x80, 0x80, 'a', byte(b0)})
		}
	}
	return values
}

// TestWordcountAcrossLanguages checks that the split function of every
// language's wordcount module writes exactly the Go module's output entries.
func TestWordcountAcrossLanguages(t *testing.T) {
	values := wordcountInputs()
	ctx := context.Background()
	var frames [][]abi.Record
	for start := 0; start < len(values); start += 1024 {
		var recs []abi.Record
		for i, v := range values[start:min(start+1024, len(values))] {
			recs = append(recs, abi.Record{Key: []byte("line"), Value: v, Timestamp: int64(i),
				Headers: []abi.Header{{Name: []byte("source"), Value: []byte("web")}}})
		}
		frames = append(frames, recs)
	}
	goWords := instantiate(t, "wordcount")
	want := make([][]abi.Entry, len(frames))
	for i, recs := range frames {
		var err error
		if want[i], err = goWords.run(ctx, "split", recs); err != nil {
			t.Fatal(err)
		}
	}
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "wordcount-"+lang)
			for f, recs := range frames {
				got, err := in.run(ctx, "split", recs)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want[f]) {
					i := firstDifference(got, want[f])
					t.Fatalf("frame %d: %d entries, want %d; entry %d differs: got %s", f, len(got), len(want[f]), i, entryAt(got, want[f], i))
				}
			}
		})
	}
}

// entryAt describes entry i of got and want.
func entryAt(got, want []abi.Entry, i int) string {
	describe := func(es []abi.Entry) string {
		if i >= len(es) {
			return "none"
		}
		return fmt.Sprintf("%d %+q", es[i].Index, es[i].Value)
	}
	return describe(got) + ", want " + describe(want)
}

// TestSDKModulesImportOnlyLog checks that modules of record functions built
// with the Rust, C and AssemblyScript SDKs import nothing but platform.log
// (and allowed WASI functions): the state and timer imports are linked only
// into modules with keyed functions.
func TestSDKModulesImportOnlyLog(t *testing.T) {
	for _, name := range []string{"kinds", "wordcount"} {
		for _, lang := range sdkLanguages {
			module := name + "-" + lang
			for _, f := range compiled(t, sandbox(), module).ImportedFunctions() {
				m, n, _ := f.Import()
				if !(m == abi.HostModule && n == abi.ImportLog) && !(m == "wasi_snapshot_preview1" && wasiAllowed[n]) {
					t.Errorf("%s imports %s.%s", module, m, n)
				}
			}
		}
	}
}

// cppModule is a module written in C++ against the C SDK's header.
const cppModule = `#include <string.h>

#include "platform_udf.h"

namespace {

uint8_t buf[4096];

int greet(const udf_record *in, udf_output *out) {
	if (in->value.len + 7 > sizeof buf) return udf_error("name too long");
	memcpy(buf, "hello, ", 7);
	memcpy(buf + 7, in->value.data, in->value.len);
	out->value = udf_bytes{buf, in->value.len + 7};
	return UDF_OK;
}

}  // namespace

void udf_register() { udf_map("greet", greet); }
`

// TestCSDKFromCPlusPlus builds a C++ module with the C SDK (clang++ without
// the C++ standard library) and runs it.
func TestCSDKFromCPlusPlus(t *testing.T) {
	dir := t.TempDir()
	src, sdk := filepath.Join(dir, "greet.cpp"), filepath.Join("..", "sdk", "c")
	if err := os.WriteFile(src, []byte(cppModule), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, wasm := filepath.Join(dir, "sdk.o"), filepath.Join(dir, "greet.wasm")
	for _, cmd := range [][]string{
		{"clang", "--target=wasm32-wasi", "-O2", "-c", "-o", obj, filepath.Join(sdk, "platform_udf.c")},
		{"clang++", "--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-fno-exceptions", "-nostdlib++",
			"-Wall", "-Wextra", "-Werror", "-I" + sdk, "-o", wasm, src, obj},
	} {
		if msg, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd[0], err, msg)
		}
	}
	code, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm, err := sandbox().CompileModule(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := sandbox().InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions(abi.ExportInitialize))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	in := &instance{mod: mod, alloc: mod.ExportedFunction(abi.ExportAlloc), call: mod.ExportedFunction(abi.ExportCall),
		desc: abi.Description{ABI: abi.Version, Functions: []abi.Function{{Name: "greet", Kind: abi.KindMap}}}}
	got, err := in.run(ctx, "greet", []abi.Record{{Value: []byte("ann")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []abi.Entry{{Tag: abi.TagRecord, Index: 0, Value: []byte("hello, ann")}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// groupedFrame encodes a grouped frame of op with one group per acc (nil:
// no accumulator) and records recs, each group of key k and window w.
func groupedFrame(op abi.Op, accs [][2][]byte, recs [][]abi.Record) []byte {
	f := abi.AppendFrameHead(nil, abi.FrameHead{Op: op, Watermark: abi.NoWatermark, Groups: uint32(len(accs))})
	for i, acc := range accs {
		g := abi.GroupHead{Flags: abi.GroupWindow, Key: []byte(fmt.Sprintf("u%d", i)), WindowStart: 10_000, WindowEnd: 20_000}
		if acc[0] != nil {
			g.Flags |= abi.GroupAcc
			g.Acc = acc[0]
		}
		if acc[1] != nil {
			g.Flags |= abi.GroupAcc2
			g.Acc2 = acc[1]
		}
		f = abi.AppendGroupHead(f, &g, uint32(len(recs[i])))
		for j := range recs[i] {
			f = abi.AppendRecord(f, &recs[i][j])
		}
	}
	return f
}

// meanAcc is an accumulator of udfs/avg's avg: the count, then the sum's
// bits.
func meanAcc(count int64, sum float64) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(count)), math.Float64bits(sum))
}

// callFrame calls the named function over a raw frame and decodes its
// output entries, whose indexes are below limit.
func (in *instance) callFrame(ctx context.Context, fn string, f []byte, limit uint32) ([]abi.Entry, error) {
	res, err := in.alloc.Call(ctx, uint64(len(f)))
	if err != nil {
		return nil, err
	}
	return in.callAt(ctx, uint32(in.desc.Lookup(fn)), uint32(res[0]), f, limit)
}

// TestWindowKindsAcrossLanguages runs the window functions of every
// language's avg module over the same grouped frames (add with and without
// an accumulator, merge, result) and checks that the output entries are
// exactly the Go module's, accumulators included.
func TestWindowKindsAcrossLanguages(t *testing.T) {
	click := func(amount string) abi.Record {
		return abi.Record{Key: []byte("u"), Value: []byte(`{"user":"u","amount":` + amount + `,"ts":1}`), Timestamp: 15_000}
	}
	ctx := context.Background()
	goAvg := instantiate(t, "avg")
	recs := [][]abi.Record{
		{click("3"), click("4"), click("12.5")},
		{click("7")},
		{click("1e2"), click("-0.25"), click("oops")},
		{},
	}
	accOf := func(fn string, recs []abi.Record) []byte {
		e, err := goAvg.callFrame(ctx, fn, groupedFrame(abi.OpAdd, [][2][]byte{{nil, nil}}, [][]abi.Record{recs}), 1)
		if err != nil || len(e) != 1 || e[0].Tag != abi.TagAccumulator {
			t.Fatalf("accumulator of %s: %+v %v", fn, e, err)
		}
		return e[0].Value
	}
	type call struct {
		fn    string
		frame []byte
		limit uint32
	}
	var calls []call
	for _, fn := range []string{"avg", "count", "largest"} {
		a, b := accOf(fn, recs[0]), accOf(fn, recs[1])
		calls = append(calls,
			call{fn, groupedFrame(abi.OpAdd, [][2][]byte{{nil, nil}, {a, nil}, {nil, nil}, {b, nil}}, recs), 4},
			call{fn, groupedFrame(abi.OpAdd, [][2][]byte{{[]byte("short"), nil}}, recs[:1]), 1},
			call{fn, groupedFrame(abi.OpMerge, [][2][]byte{{a, b}, {b, a}}, [][]abi.Record{nil, nil}), 2})
		if fn != "largest" {
			calls = append(calls, call{fn, groupedFrame(abi.OpResult, [][2][]byte{{a, nil}, {b, nil}, {[]byte("short"), nil}}, [][]abi.Record{nil, nil, nil}), 3})
		}
	}
	// Results of single amounts: the average is the amount itself, formatted
	// as Go formats floats, over doubles of every magnitude.
	rng := rand.New(rand.NewSource(5))
	var floats [][2][]byte
	// Short decimals (at most 15 digits, at most 22 after the point) take
	// the SDKs' fast path; the others, and its edges, the exact search.
	for _, f := range []float64{0, math.Copysign(0, -1), 0.1, 1e21, 1e-7, 5e-324, math.MaxFloat64, 123456789012345680000, 2.5, 1.0 / 3,
		1e14, 999999999999999, 1e15, 922912862521546.25, 0.000123, 1e-5, 12345678.9, -2.5, 123.456, 3e-22, 1.5e-23, 0.1 + 0.2} {
		floats = append(floats, [2][]byte{meanAcc(1, f), nil})
	}
	for len(floats) < 900 {
		if f := math.Float64frombits(rng.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			floats = append(floats, [2][]byte{meanAcc(1, f), nil})
		}
		floats = append(floats, [2][]byte{meanAcc(1+rng.Int63n(99), float64(rng.Int63n(100000))), nil},
			[2][]byte{meanAcc(1, float64(rng.Int63n(1_000_000))/math.Pow10(rng.Intn(12))), nil},
			[2][]byte{meanAcc(1, float64(rng.Int63n(1<<40))*0.908), nil})
	}
	calls = append(calls, call{"avg", groupedFrame(abi.OpResult, floats, make([][]abi.Record, len(floats))), uint32(len(floats))})
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "avg-"+lang)
			if !reflect.DeepEqual(in.desc, goAvg.desc) {
				t.Fatalf("description %+v, want %+v", in.desc, goAvg.desc)
			}
			for i, c := range calls {
				want, err := goAvg.callFrame(ctx, c.fn, c.frame, c.limit)
				if err != nil {
					t.Fatal(err)
				}
				got, err := in.callFrame(ctx, c.fn, c.frame, c.limit)
				if err != nil {
					t.Fatalf("call %d (%s): %v", i, c.fn, err)
				}
				// Accumulator sizes differ in their error messages only.
				for j := range got {
					if got[j].Tag == abi.TagError && j < len(want) && want[j].Tag == abi.TagError && strings.Contains(string(want[j].Message), "accumulator") {
						got[j].Message = want[j].Message
					}
				}
				if !reflect.DeepEqual(got, want) {
					j := firstDifference(got, want)
					t.Errorf("call %d (%s): %d entries, want %d; entry %d differs: got %s", i, c.fn, len(got), len(want), j, jsonEntryAt(got, want, j))
				}
			}
		})
	}
}

// TestWindowFunctionsInEveryLanguage runs the window_process, session_gap
// and watermark functions of udfs/windowkinds-* and checks their exact
// output entries, the same in every language.
func TestWindowFunctionsInEveryLanguage(t *testing.T) {
	rec := func(v string, ts int64) abi.Record {
		return abi.Record{Key: []byte("k"), Value: []byte(v), Timestamp: ts}
	}
	grouped := func(groups ...abi.GroupHead) func(recs ...[]abi.Record) []byte {
		return func(recs ...[]abi.Record) []byte {
			f := abi.AppendFrameHead(nil, abi.FrameHead{Watermark: abi.NoWatermark, Groups: uint32(len(groups))})
			for i := range groups {
				f = abi.AppendGroupHead(f, &groups[i], uint32(len(recs[i])))
				for j := range recs[i] {
					f = abi.AppendRecord(f, &recs[i][j])
				}
			}
			return f
		}
	}
	window := func(key string, start, end int64) abi.GroupHead {
		return abi.GroupHead{Flags: abi.GroupWindow, Key: []byte(key), WindowStart: start, WindowEnd: end}
	}
	failed := func(index uint32, msg string) abi.Entry {
		return abi.Entry{Tag: abi.TagError, Index: index, Message: []byte(msg)}
	}
	emitted := func(index uint32, v string) abi.Entry {
		return abi.Entry{Tag: abi.TagRecord, Index: index, Flags: abi.HasKey | abi.HasTimestamp, Key: []byte("v"), Value: []byte(v), Timestamp: 7}
	}
	tests := []struct {
		fn    string
		frame []byte
		limit uint32
		want  []abi.Entry
	}{
		{"summary", grouped(window("u1", 1000, 2000), window("u2", 0, 10), window("u3", 5, 6))(
			[]abi.Record{rec("a", 1500), rec("bb", 1600)}, nil, []abi.Record{rec("x", 5), rec("!", 5)}), 3,
			[]abi.Entry{
				{Tag: abi.TagRecord, Index: 0, Value: []byte("u1:1000:2000:2")}, emitted(0, "a"), emitted(0, "bb"),
				{Tag: abi.TagRecord, Index: 1, Value: []byte("u2:0:10:0")},
				failed(2, "bad record"),
			}},
		{"gap", grouped(abi.GroupHead{Key: []byte("a")}, abi.GroupHead{Key: []byte("b")})(
			[]abi.Record{rec("xy", 1), rec("!", 2)}, []abi.Record{rec("", 3), rec("abc", 4)}), 4,
			[]abi.Entry{{Tag: abi.TagTimestamp, Index: 0, Timestamp: 2000}, failed(1, "bad gap"),
				{Tag: abi.TagTimestamp, Index: 2, Timestamp: 0}, {Tag: abi.TagTimestamp, Index: 3, Timestamp: 3000}}},
		{"beat", frame([]abi.Record{rec("x", 5), rec("beat", 6), rec("!", 7), rec("beat", 8)}), 4,
			[]abi.Entry{{Tag: abi.TagWatermark, Index: 1, Timestamp: 6}, failed(2, "bad beat"), {Tag: abi.TagWatermark, Index: 3, Timestamp: 8}}},
	}
	ctx := context.Background()
	for _, lang := range sdkLanguages {
		t.Run(lang, func(t *testing.T) {
			in := instantiate(t, "windowkinds-"+lang)
			for _, tt := range tests {
				got, err := in.callFrame(ctx, tt.fn, tt.frame, tt.limit)
				if err != nil {
					t.Fatalf("%s: %v", tt.fn, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got  %+v\nwant %+v", tt.fn, got, tt.want)
				}
			}
		})
	}
}
