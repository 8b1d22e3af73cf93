package connector

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestStartEmbeddedServesJetStream(t *testing.T) {
	ts := startServer(t)
	if !strings.HasPrefix(ts.srv.ClientURL(), "nats://127.0.0.1:") {
		t.Fatalf("ClientURL = %q, want a loopback URL", ts.srv.ClientURL())
	}
	info, err := ts.js.AccountInfo(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Streams != 0 {
		t.Fatalf("streams = %d, want 0 in a fresh store", info.Streams)
	}
}

func TestStartEmbeddedErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name string
		cfg  EmbeddedConfig
		want []string
	}{
		{"port in use", EmbeddedConfig{DataDir: t.TempDir(), Port: port},
			[]string{"127.0.0.1:" + strconv.Itoa(port), "address already in use"}},
		{"no data dir", EmbeddedConfig{Port: -1}, []string{"DataDir is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := StartEmbedded(testCtx(t), tt.cfg)
			if err == nil {
				_ = srv.Shutdown(context.Background())
				t.Fatal("StartEmbedded succeeded")
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEmbeddedKeepsStreamsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	var last uint64
	for round := range 2 {
		srv, err := StartEmbedded(ctx, EmbeddedConfig{DataDir: dir, Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		nc, js, err := Connect(ctx, srv.ClientURL(), "restart")
		if err != nil {
			t.Fatal(err)
		}
		if err := EnsureStream(ctx, js, "KEEP", "keep.>"); err != nil {
			t.Fatal(err)
		}
		ack, err := js.Publish(ctx, "keep.x", []byte("v"))
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if ack.Sequence != last+1 {
			t.Fatalf("round %d: sequence %d, want %d", round, ack.Sequence, last+1)
		}
		last = ack.Sequence
	}
}

func TestStartEmbeddedLogsThroughSlog(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := EmbeddedConfig{DataDir: t.TempDir(), Port: taken.Addr().(*net.TCPAddr).Port, Logger: logger}
	if _, err := StartEmbedded(testCtx(t), cfg); err == nil {
		t.Fatal("StartEmbedded succeeded on a taken port")
	}
	for _, want := range []string{"level=INFO msg=\"Starting nats-server\" component=nats-server", "level=ERROR msg=\"Error listening on port"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logged.String())
		}
	}
}
