package host

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
)

// Function indexes of testdata/gomod.
const (
	goUpper = iota
	goHello
	goHoard
	goSpin
)

var goModule struct {
	once sync.Once
	wasm []byte
	err  error
}

// goModuleWasm builds testdata/gomod for wasip1 as a reactor, once per test
// binary.
func goModuleWasm(t testing.TB) []byte {
	t.Helper()
	goModule.once.Do(func() {
		goModule.wasm, goModule.err = buildGoModule()
	})
	if goModule.err != nil {
		t.Fatal(goModule.err)
	}
	return goModule.wasm
}

func buildGoModule() ([]byte, error) {
	tool, err := exec.LookPath("go")
	if err != nil {
		return nil, errors.New("the go tool is needed to build testdata/gomod")
	}
	dir, err := os.MkdirTemp("", "gomod")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "gomod.wasm")
	cmd := exec.Command(tool, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./testdata/gomod")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New("build testdata/gomod: " + err.Error() + "\n" + string(msg))
	}
	return os.ReadFile(out)
}

// TestGoModule runs a Go reactor: it validates (its WASI imports pass), its
// _initialize runs, it maps, prints and logs, running out of memory is a
// memory_limit failure and an endless loop a deadline failure. The subtests
// share one compilation.
func TestGoModule(t *testing.T) {
	h, rec := newHost(t, "")
	m, err := h.Compile(context.Background(), goModuleWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	want := abi.Description{ABI: 1, Functions: []abi.Function{
		{Name: "upper", Kind: abi.KindMap}, {Name: "hello", Kind: abi.KindMap}, {Name: "hoard", Kind: abi.KindMap},
		{Name: "spin", Kind: abi.KindMap},
	}}
	if !reflect.DeepEqual(m.Description, want) {
		t.Fatalf("description %+v", m.Description)
	}
	ctx := context.Background()

	t.Run("map, print and log", func(t *testing.T) {
		p := newPool(t, m, InstanceConfig{Attrs: []slog.Attr{slog.String("job", "go")}})
		out, err := p.Call(ctx, goUpper, inputFrame(values("gopher", "Wasm")...))
		if err != nil {
			t.Fatal(err)
		}
		wantEntries := []abi.Entry{
			{Tag: abi.TagRecord, Index: 0, Value: []byte("GOPHER")},
			{Tag: abi.TagRecord, Index: 1, Value: []byte("WASM")},
		}
		if entries := decodeOutput(t, out, 2); !reflect.DeepEqual(entries, wantEntries) {
			t.Fatalf("entries %+v", entries)
		}
		if _, err := p.Call(ctx, goHello, inputFrame(values("world")...)); err != nil {
			t.Fatal(err)
		}
		attrs := map[string]string{"module": m.ID, "function": "hello", "job": "go"}
		stdout := map[string]string{"module": m.ID, "function": "hello", "job": "go", "stream": "stdout"}
		wantLogs := []logRecord{
			{slog.LevelInfo, "hello world", stdout},
			{slog.LevelInfo, "saw world", attrs},
		}
		if got := rec.matching(map[string]string{"job": "go"}); !reflect.DeepEqual(got, wantLogs) {
			t.Fatalf("logs\n%+v\nwant\n%+v", got, wantLogs)
		}
		if n := p.Instantiations(); n != 1 {
			t.Fatalf("instantiations %d, want 1", n)
		}
	})

	t.Run("out of memory", func(t *testing.T) {
		p := newPool(t, m, InstanceConfig{MemoryLimit: 32 << 20})
		_, err := p.Call(ctx, goHoard, inputFrame(values("x")...))
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != KindMemoryLimit {
			t.Fatalf("error %v, want a memory_limit *CallError", err)
		}
		if _, err := p.Call(ctx, goUpper, inputFrame(values("x")...)); err != nil {
			t.Fatal(err)
		}
		if n := p.Instantiations(); n != 2 {
			t.Fatalf("instantiations %d, want 2", n)
		}
		stderr := rec.matching(map[string]string{"function": "hoard", "stream": "stderr"})
		if !slices.ContainsFunc(stderr, func(r logRecord) bool { return r.Message == "fatal error: out of memory" }) {
			t.Fatalf("stderr of the failed call %+v", stderr)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		// A memory limit of its own keeps the idle instances of the other
		// subtests out of this Guest.
		p := newPool(t, m, InstanceConfig{MemoryLimit: 48 << 20, CallTimeout: 100 * time.Millisecond})
		_, err := p.Call(ctx, goSpin, inputFrame(values("x")...))
		want := "udf[" + m.ID + "] function[spin]: deadline: call timeout 100ms: module closed with context canceled"
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != KindDeadline || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
		if _, err := p.Call(ctx, goUpper, inputFrame(values("x")...)); err != nil {
			t.Fatal(err)
		}
		if n := p.Instantiations(); n != 2 {
			t.Fatalf("instantiations %d, want 2", n)
		}
	})
}
