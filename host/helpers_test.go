package host

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"wasmstream.io/platform/abi"
)

// buildWAT assembles a WAT source with wat2wasm and its feature flags.
func buildWAT(t testing.TB, name string, src []byte, flags ...string) []byte {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm (wabt) is needed to build test modules: %v", err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, name+".wat"), filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(tool, append(flags, in, "-o", out)...).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", name, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// fixture assembles testdata/<name>.wat.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".wat"))
	if err != nil {
		t.Fatal(err)
	}
	return buildWAT(t, name, src)
}

// logRecord is a log line seen by a recorder, with its attributes flattened.
type logRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu      sync.Mutex
	records []logRecord
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	lr := logRecord{Level: rec.Level, Message: rec.Message, Attrs: map[string]string{}}
	rec.Attrs(func(a slog.Attr) bool {
		lr.Attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, lr)
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { panic("recorder: WithAttrs not used by host") }
func (r *recorder) WithGroup(string) slog.Handler      { panic("recorder: WithGroup not used by host") }

// matching returns the records whose attributes include every pair in attrs.
func (r *recorder) matching(attrs map[string]string) []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logRecord
	for _, rec := range r.records {
		ok := true
		for k, v := range attrs {
			ok = ok && rec.Attrs[k] == v
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out
}

// newHost creates a Host logging into a recorder, closed when the test ends.
func newHost(t testing.TB, cacheDir string) (*Host, *recorder) {
	t.Helper()
	rec := &recorder{}
	h, err := New(context.Background(), Config{CacheDir: cacheDir, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h, rec
}

// compileFixture compiles testdata/<name>.wat.
func compileFixture(t testing.TB, h *Host, name string) *Module {
	t.Helper()
	m, err := h.Compile(context.Background(), fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newPool creates a Guest closed when the test ends.
func newPool(t testing.TB, m *Module, cfg InstanceConfig) *Guest {
	t.Helper()
	p := m.NewGuest(cfg)
	t.Cleanup(func() {
		if err := p.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return p
}

// inputFrame encodes records into an input frame.
func inputFrame(records ...abi.Record) []byte {
	return abi.AppendFrame(nil, records)
}

// values makes records with the given values and no key.
func values(vs ...string) []abi.Record {
	rs := make([]abi.Record, len(vs))
	for i, v := range vs {
		rs[i] = abi.Record{Value: []byte(v)}
	}
	return rs
}

// decodeOutput decodes an output frame answering inputs records into
// entries that own their bytes.
func decodeOutput(t testing.TB, out []byte, inputs int) []abi.Entry {
	t.Helper()
	var or abi.OutputReader
	if err := or.Reset(out, uint32(inputs)); err != nil {
		t.Fatal(err)
	}
	var entries []abi.Entry
	var e abi.Entry
	for or.Next(&e) {
		entries = append(entries, abi.Entry{
			Tag: e.Tag, Index: e.Index, Flags: e.Flags, Timestamp: e.Timestamp,
			Key: bytes.Clone(e.Key), Value: bytes.Clone(e.Value), Message: bytes.Clone(e.Message),
			Headers: slices.Clone(e.Headers),
		})
	}
	if err := or.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}
