package connector

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestEnsureStream(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	steps := []struct {
		subjects []string
	}{
		{[]string{"orders.>"}},
		{[]string{"orders.>"}},
		{[]string{"orders.>", "refunds.>"}},
	}
	for i, step := range steps {
		if err := EnsureStream(ctx, ts.js, "ORDERS", step.subjects...); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		st, err := ts.js.Stream(ctx, "ORDERS")
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		if !slices.Equal(cfg.Subjects, step.subjects) || cfg.Storage != jetstream.FileStorage {
			t.Fatalf("step %d: subjects %q storage %v, want %q file", i, cfg.Subjects, cfg.Storage, step.subjects)
		}
	}
	err := EnsureStream(ctx, ts.js, "OTHER", "orders.eu")
	if err == nil || !strings.Contains(err.Error(), `"OTHER"`) {
		t.Fatalf("overlapping stream: error %v, want one naming OTHER", err)
	}
}

func TestConnectFailsClearly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// Port 1 on loopback has no NATS server.
	_, _, err := Connect(ctx, "nats://127.0.0.1:1", "nobody")
	if err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Fatalf("error %v, want one naming the URL", err)
	}
}
