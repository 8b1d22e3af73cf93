package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/host"
	"wasmstream.io/platform/internal/wasmbuild"
)

// newTestHost is a host of the test's own, closed when it ends.
func newTestHost(t testing.TB) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), host.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func newTestManager(t *testing.T) *Manager {
	t.Helper()
	m, err := NewManager(context.Background(), Config{
		DataDir: t.TempDir(), Host: newTestHost(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

func runJob(t *testing.T, m *Manager, spec string) JobInfo {
	t.Helper()
	info, err := m.SubmitJob(context.Background(), []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err = m.WaitJob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != StateFinished {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
	return info
}

func vertexInfo(info JobInfo, id string) VertexInfo {
	for _, v := range info.Vertices {
		if v.ID == id {
			return v
		}
	}
	return VertexInfo{}
}

// TestShippingAndChaining runs generator -> upper -> discard with each way of
// shipping records and checks the counts and which vertices share a task.
func TestShippingAndChaining(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		parallelism int
		shipping    string
		in          int64
		chained     bool
	}{
		{name: "forward", parallelism: 1, in: 1000, chained: true},
		{name: "forward across parallelism rebalances", parallelism: 3, in: 1000},
		{name: "rebalance", parallelism: 1, shipping: "partition: rebalance", in: 1000},
		{name: "broadcast", parallelism: 3, shipping: "partition: broadcast", in: 3000},
		{name: "hash", parallelism: 2, shipping: "key_by: {field: seq}", in: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := runJob(t, m, fmt.Sprintf(`
name: shipping
sources: [{id: gen, generator: {kind: sequence, count: 1000}}]
operators: [{id: up, input: gen, parallelism: %d, map: {module: %s, function: upper}, %s}]
sinks: [{id: out, input: up, parallelism: %d, discard: true}]
`, tt.parallelism, mod.ID, tt.shipping, tt.parallelism))
			up := vertexInfo(info, "up")
			if up.RecordsIn != tt.in || up.RecordsOut != tt.in || vertexInfo(info, "out").RecordsIn != tt.in {
				t.Fatalf("vertices %+v", info.Vertices)
			}
			if chained := up.Task == vertexInfo(info, "gen").Task; chained != tt.chained {
				t.Fatalf("up runs in task %q, gen in %q; chained %v, want %v", up.Task, vertexInfo(info, "gen").Task, chained, tt.chained)
			}
			if up.Task != vertexInfo(info, "out").Task {
				t.Fatalf("the sink is not chained to up: %+v", info.Vertices)
			}
		})
	}
}

func TestSubmitRejectsWhatCannotRun(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name     string
		operator string
		mentions []string
	}{
		{"missing module", fmt.Sprintf("map: {module: %s, function: upper}", missing), []string{"operators[0].map.module", "no module"}},
		{"missing function", fmt.Sprintf("map: {module: %s, function: lower}", mod.ID), []string{"operators[0].map.function", `no function "lower"`, "upper (map)"}},
		{"wrong kind", fmt.Sprintf("filter: {module: %s, function: upper}", mod.ID), []string{"operators[0].filter.function", "is a map function, want filter"}},
		{"key function of another kind", fmt.Sprintf("key_by: {module: %s, function: upper}, map: {module: %s, function: upper}", mod.ID, mod.ID), []string{"operators[0].key_by.function", "want key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.SubmitJob(context.Background(), []byte(fmt.Sprintf(`
name: bad
sources: [{id: gen, generator: {kind: sequence, count: 10}}]
operators: [{id: op, input: gen, %s}]
sinks: [{id: out, input: op, discard: true}]
`, tt.operator)))
			if !errors.Is(err, ErrInvalidJob) {
				t.Fatalf("err %v, want ErrInvalidJob", err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestModuleInUseCannotBeDeleted(t *testing.T) {
	m := newTestManager(t)
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "upper-wat"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(context.Background(), []byte(fmt.Sprintf(`
name: endless
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
operators: [{id: up, input: gen, map: {module: %s, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`, mod.ID)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteModule(context.Background(), mod.ID); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), info.ID) {
		t.Fatalf("delete while running: %v", err)
	}
	if info, err = m.CancelJob(context.Background(), info.ID); err != nil || info.State != StateCanceled {
		t.Fatalf("cancel: %v, state %s", err, info.State)
	}
	if _, err := m.CancelJob(context.Background(), info.ID); !errors.Is(err, ErrFinished) {
		t.Fatalf("second cancel: %v", err)
	}
	if err := m.DeleteModule(context.Background(), mod.ID); err != nil {
		t.Fatalf("delete after cancel: %v", err)
	}
	if _, err := m.GetModule(context.Background(), mod.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}
