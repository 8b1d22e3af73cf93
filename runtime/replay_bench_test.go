package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/replay"
)

// BenchmarkReplayKey replays one of 100 keys of a keyed count window over
// the 20,000 records after a checkpoint (19 windows of each key fire, and
// u3's of the checkpoint): the figure is the stream records
// a replay reads and runs through the job's chain per second.
func BenchmarkReplayKey(b *testing.B) {
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: b.TempDir(), Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(ctx) }()
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "replay-bench")
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := host.New(ctx, host.Config{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = h.Close(ctx) }()
	m, err := NewManager(ctx, Config{DataDir: b.TempDir(), Host: h, JetStream: js, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = m.Close(ctx) }()
	const records = 20_000
	var after [][]byte
	for i := range records {
		after = append(after, fmt.Appendf(nil, `{"user":"u%d","ts":%d}`, i%100, 1000+i))
	}
	job, cp := runAroundCheckpoint(b, m, js, clicksJob, [][]byte{[]byte(`{"user":"u3","ts":999}`)}, after, 1901)
	b.ResetTimer()
	for range b.N {
		events := replayEvents(b, m, job, replay.Request{Checkpoint: cp, Key: replay.Bytes("u3")})
		if end := events[len(events)-1]; end.Records != records/100 {
			b.Fatalf("end %+v", end)
		}
	}
	b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
}
