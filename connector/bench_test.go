package connector

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/cputime"
)

const benchBatch = 1024

// reportRates reports records per wall second since start and the CPU the
// whole process (client and embedded server) used per record since cpu, a
// cputime.Process reading.
func reportRates(b *testing.B, records int, start time.Time, cpu int64) {
	b.Helper()
	b.ReportMetric(float64(records)/time.Since(start).Seconds(), "records/s")
	if used := cputime.Process() - cpu; used > 0 {
		b.ReportMetric(float64(used)/float64(records), "cpu-ns/record")
		b.ReportMetric(float64(records)/(float64(used)/1e9), "records/cpu-s")
	}
}

// fillStream publishes n messages of 100 bytes to subject asynchronously.
func fillStream(b *testing.B, js jetstream.JetStream, subject string, n int) {
	b.Helper()
	payload := bytes.Repeat([]byte("x"), 100)
	for i := range n {
		if _, err := js.PublishAsync(subject, payload); err != nil {
			b.Fatal(err)
		}
		if i%4096 == 4095 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
}

func BenchmarkJetStreamSource(b *testing.B) {
	ts := startServer(b)
	ctx := testCtx(b)
	if err := EnsureStream(ctx, ts.js, "BENCH", "bench.>"); err != nil {
		b.Fatal(err)
	}
	fillStream(b, ts.js, "bench.in", b.N)
	src, err := NewJetStreamSource(ctx, ts.js, JetStreamSourceConfig{Stream: "BENCH", Subjects: []string{"bench.in"}, Bounded: true, Parallelism: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var batch abi.Batch
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	read := 0
	for {
		batch.Reset()
		err := src.Fetch(ctx, &batch, benchBatch, time.Second)
		read += batch.Len()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(read)/time.Since(start).Seconds(), "records/s")
	if read != b.N {
		b.Fatalf("read %d records, want %d", read, b.N)
	}
}

func BenchmarkJetStreamSink(b *testing.B) {
	ts := startServer(b)
	ctx := testCtx(b)
	if err := EnsureStream(ctx, ts.js, "BENCH", "bench.>"); err != nil {
		b.Fatal(err)
	}
	sink, err := NewJetStreamSink(ctx, ts.js, JetStreamSinkConfig{Subject: "bench.out"})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	var batch abi.Batch
	payload := bytes.Repeat([]byte("x"), 100)
	for range benchBatch {
		batch.AppendParts([]byte("key"), payload, BaseTimestamp, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Process()
	for left := b.N; left > 0; left -= benchBatch {
		if err := sink.Write(ctx, batch.Records[:min(left, benchBatch)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := sink.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	reportRates(b, b.N, start, cpu)
}

// BenchmarkTxSinkCommit stages b.N records in one epoch and commits it:
// the publishing an exactly-once sink adds over BenchmarkJetStreamSink.
func BenchmarkTxSinkCommit(b *testing.B) { benchTxSinkCommit(b, false, 1) }

// BenchmarkTxSinkCommitFenced is BenchmarkTxSinkCommit with the sink
// fenced: on this stream of one replica every message goes out expecting
// the fence, with its id as Platform-Id rather than Nats-Msg-Id, as many in
// flight as unfenced.
func BenchmarkTxSinkCommitFenced(b *testing.B) { benchTxSinkCommit(b, true, 1) }

// BenchmarkTxSinkCommitFencedBatches is BenchmarkTxSinkCommitFenced in
// atomic batches of 1,000, one at a time, as a fenced sink commits to a
// replicated stream (and to every stream before it committed message by
// message on one replica).
func BenchmarkTxSinkCommitFencedBatches(b *testing.B) { benchTxSinkCommit(b, true, 1, withBatches) }

// BenchmarkTxSinkCommitR3 and BenchmarkTxSinkCommitR3Fenced commit to a
// stream of three replicas on a cluster of three nodes in the process, the
// stream a fenced sink has in cluster mode; fenced, in atomic batches.
func BenchmarkTxSinkCommitR3(b *testing.B)       { benchTxSinkCommit(b, false, 3) }
func BenchmarkTxSinkCommitR3Fenced(b *testing.B) { benchTxSinkCommit(b, true, 3) }

// withBatches makes a fenced sink commit in atomic batches.
func withBatches(cfg *TxSinkConfig) { cfg.inBatches = true }

func benchTxSinkCommit(b *testing.B, fenced bool, replicas int, opts ...func(*TxSinkConfig)) {
	ctx := testCtx(b)
	var js jetstream.JetStream
	if replicas == 1 {
		js = startServer(b).js
		if err := EnsureStream(ctx, js, "BENCH", "bench.>"); err != nil {
			b.Fatal(err)
		}
	} else {
		c := startCluster(b, replicas)
		c.createStream(b, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench.>"}, Replicas: replicas, Storage: jetstream.FileStorage})
		js = c.js[1]
	}
	cfg := TxSinkConfig{Subject: "bench.out", Prefix: "job.out.0", SpillDir: b.TempDir()}
	if fenced {
		f, err := TakeFence(ctx, js, cfg.Subject, cfg.Prefix)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Fence = f
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	sink, err := NewTxSink(ctx, js, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	var batch abi.Batch
	payload := bytes.Repeat([]byte("x"), 100)
	for range benchBatch {
		batch.AppendParts([]byte("key"), payload, BaseTimestamp, nil)
	}
	for left := b.N; left > 0; left -= benchBatch {
		if err := sink.Write(ctx, batch.Records[:min(left, benchBatch)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := sink.Seal(1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), cputime.Process()
	if err := sink.Commit(ctx, 1); err != nil {
		b.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	reportRates(b, b.N, start, cpu)
	if sink.Committed() != 1 {
		b.Fatalf("%d epochs committed, want 1", sink.Committed())
	}
}

func BenchmarkGenerator(b *testing.B) {
	for _, kind := range generatorKinds {
		b.Run(kind, func(b *testing.B) {
			g, err := NewGenerator(GeneratorConfig{Kind: kind, Parallelism: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			var batch abi.Batch
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for left := b.N; left > 0; left -= benchBatch {
				batch.Reset()
				if err := g.Fetch(ctx, &batch, min(left, benchBatch), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}
