package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exchange"
)

var experiment = flag.Bool("experiment", false, "run the experiments and write their figures into docs/")

// needExperiment skips the test unless -experiment is set.
func needExperiment(t *testing.T) {
	t.Helper()
	if !*experiment {
		t.Skip("an experiment: run with -experiment")
	}
}

// recordSize is the value size of the experiments' records.
const recordSize = 100

// epoch anchors monoNanos.
var epoch = time.Now()

func monoNanos() int64 { return int64(time.Since(epoch)) }

// pipeline is two tasks joined by one exchange edge, as the runtime wires a
// source task to the task after it: the producer emits batches through the
// edge's writer, the consumer reads buffers from its gate and decodes their
// records. Either side can be slowed while it runs. Each record carries the
// monotonic time of its emission as its timestamp, so the consumer can
// measure its latency.
type pipeline struct {
	writer *exchange.Writer
	gate   *exchange.Gate
	// producerRate and consumerRate are the sides' speeds in records per
	// second; 0 is as fast as they go.
	producerRate atomic.Int64
	consumerRate atomic.Int64
	produced     atomic.Int64
	consumed     atomic.Int64
	// Once recording is set, the consumer keeps the latency of one record
	// in every latencyStride, up to the capacity of latencies.
	recording     atomic.Bool
	latencyStride int64
	latencies     []int64
}

func newPipeline(bufferTimeout time.Duration) *pipeline {
	cfg := exchange.Config{BufferTimeout: bufferTimeout}
	edge := exchange.NewEdge(cfg, 1, 1)
	return &pipeline{writer: edge.Writer(0), gate: exchange.NewGate(cfg, edge.Channels(0)), latencyStride: 1}
}

// pacer holds one side to its rate: work is due at the rate, and the side
// sleeps once it is a slot ahead. A side that falls behind (because the
// other side held it up) catches up at most slack: like a task whose own
// speed is the limit, not a schedule it must keep.
type pacer struct {
	due time.Time
}

const (
	slot  = time.Millisecond
	slack = 10 * time.Millisecond
)

// quota is the records a side at rate does in a slot, at least 1.
func quota(rate int64) int {
	return max(int(float64(rate)*slot.Seconds()), 1)
}

// done accounts n records at rate and sleeps if the side is ahead.
func (p *pacer) done(n int, rate int64) {
	now := time.Now()
	if p.due.Before(now.Add(-slack)) {
		p.due = now.Add(-slack)
	}
	p.due = p.due.Add(time.Duration(float64(n) / float64(rate) * 1e9))
	if d := p.due.Sub(now); d >= slot {
		time.Sleep(d)
	}
}

// produce runs the producer until ctx ends, then closes the writer.
func (p *pipeline) produce(ctx context.Context) error {
	value := []byte(strings.Repeat("x", recordSize))
	batch := make([]abi.Record, 1024)
	for i := range batch {
		batch[i].Value = value
	}
	part := exchange.Forward(0)
	var pace pacer
	for ctx.Err() == nil {
		rate := p.producerRate.Load()
		n := len(batch)
		if rate > 0 {
			n = min(quota(rate), n)
		}
		now := monoNanos()
		for i := range batch[:n] {
			batch[i].Timestamp = now
		}
		if err := p.writer.EmitBatch(ctx, part, batch[:n]); err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
		p.produced.Add(int64(n))
		if rate > 0 {
			pace.done(n, rate)
		}
	}
	closing, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.writer.Close(closing)
}

// consume reads until the producer's end of partition.
func (p *pipeline) consume(ctx context.Context) error {
	var rec abi.Record
	var pace pacer
	var seen int64
	for {
		buf, err := p.gate.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n := 0
		now := monoNanos()
		for buf.Next(&rec) {
			if seen%p.latencyStride == 0 && len(p.latencies) < cap(p.latencies) && p.recording.Load() {
				p.latencies = append(p.latencies, now-rec.Timestamp)
			}
			seen++
			n++
		}
		buf.Recycle()
		p.consumed.Add(int64(n))
		if rate := p.consumerRate.Load(); rate > 0 && n > 0 {
			pace.done(n, rate)
		}
	}
}

// run starts both sides; the returned stop ends the producer and waits for
// the consumer to drain.
func (p *pipeline) run(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = p.produce(ctx) }()
	go func() { defer wg.Done(); errs[1] = p.consume(context.Background()) }()
	return func() {
		cancel()
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
}

// rssBytes is the process's resident set size.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// loadAverage is the machine's 1-minute load average, for the record.
func loadAverage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))[0]
}
