package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/cputime"
	"wasmstream.io/platform/internal/nexmark"
	"wasmstream.io/platform/runtime"
	"wasmstream.io/platform/udfs/nexmark/queries"
)

// benchPlatform is a platform in this process for bench nexmark: embedded
// NATS, the manager, the module of the queries.
type benchPlatform struct {
	s      *server
	module string
	jobs   int
	done   func()
}

func startBenchPlatform(ctx context.Context, modulePath string) (*benchPlatform, error) {
	dir, cleanup, err := benchDir()
	if err != nil {
		return nil, err
	}
	var wasm []byte
	if modulePath != "" {
		wasm, err = os.ReadFile(modulePath)
	} else {
		wasm, err = buildGoUDF(ctx, "udfs/nexmark", dir)
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	cfg := config{HTTPAddr: "127.0.0.1:0", DataDir: dir, NATSPort: -1, LogFormat: "text", LogLevel: "warn"}
	s, err := startServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		cleanup()
		return nil, err
	}
	p := &benchPlatform{s: s, done: func() {
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.stop(stop)
		cleanup()
	}}
	mod, err := s.manager.UploadModule(ctx, wasm)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("upload the module: %w", err)
	}
	p.module = mod.ID
	return p, nil
}

func (p *benchPlatform) stop() { p.done() }

// run runs the query's job once and measures it: wall and CPU time from the
// job's RUNNING to its end, the time to get there from the submission, and
// with a rate the latency of every record the sink publishes.
func (p *benchPlatform) run(ctx context.Context, b benchNexmark) (benchResult, error) {
	p.jobs++
	params := queries.Params{Module: p.module, Events: b.events, Seed: b.seed, Rate: b.rate, Parallelism: b.parallelism, Sink: queries.Discard}
	var lat *latencyProbe
	if b.rate > 0 {
		subject := fmt.Sprintf("bench.%s.%d", b.query, p.jobs)
		var err error
		if lat, err = newLatencyProbe(ctx, p.s.nc, subject); err != nil {
			return benchResult{}, err
		}
		defer lat.close()
		params.Sink = queries.JetStream(subject)
	}
	spec, err := queries.Spec(b.query, params)
	if err != nil {
		return benchResult{}, err
	}
	goruntime.GC()
	submitted := time.Now()
	info, err := p.s.manager.SubmitJob(ctx, []byte(spec))
	if err != nil {
		return benchResult{}, fmt.Errorf("submit %s: %w", b.query, err)
	}
	defer p.s.manager.DeleteJob(context.Background(), info.ID, false)
	for info.State == runtime.StateCreated {
		time.Sleep(time.Millisecond)
		if info, err = p.s.manager.GetJob(ctx, info.ID); err != nil {
			return benchResult{}, err
		}
	}
	running, cpu := time.Now(), cputime.Process()
	if lat != nil {
		// The generator starts between the submission and RUNNING:
		// from the submission, the latencies are at most the job's
		// start-up too long, never too short.
		lat.start(submitted)
	}
	if info, err = p.s.manager.WaitJob(ctx, info.ID); err != nil {
		return benchResult{}, err
	}
	r := benchResult{wall: time.Since(running), cpu: time.Duration(cputime.Process() - cpu), startup: running.Sub(submitted)}
	if info.State != runtime.StateFinished {
		return r, fmt.Errorf("job %s %s: %s", b.query, info.State, info.Failure)
	}
	for _, v := range info.Vertices {
		if v.ID == "out" {
			r.rows = v.RecordsIn
		}
	}
	r.peakRSS = cputime.PeakRSS()
	if lat != nil {
		last := nexmark.DefaultBaseTime + (b.events-1)*1000/int64(b.rate)
		if r.latencies, err = lat.wait(r.rows, last); err != nil {
			return r, err
		}
	}
	return r, nil
}

// latencyProbe subscribes to a sink's subject and takes each message's
// latency: its arrival less the wall time its event time stands for. With
// the generator paced at R events per second and event time advancing R
// events per second too, the event of time t was made at the job's start
// plus t minus the generator's base time (a window's result, stamped with
// the window's end - 1 ms, at that end); the start is taken as the job's
// submission, so the latencies are at most its start-up (a few
// milliseconds) longer than the true ones.
type latencyProbe struct {
	js      jetstream.JetStream
	stream  string
	sub     *nats.Subscription
	mu      sync.Mutex
	arrived []int64 // unix ns
	stamps  []int64 // the records' timestamps, ms
	origin  time.Time
}

func newLatencyProbe(ctx context.Context, nc *nats.Conn, subject string) (*latencyProbe, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	l := &latencyProbe{js: js, stream: "BENCH_" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	// The sink needs a stream that captures its subject; this one keeps
	// little, in memory.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: l.stream, Subjects: []string{subject},
		Storage: jetstream.MemoryStorage, MaxMsgs: 10_000, Discard: jetstream.DiscardOld}); err != nil {
		return nil, fmt.Errorf("create the sink's stream: %w", err)
	}
	l.sub, err = nc.Subscribe(subject, func(m *nats.Msg) {
		now := time.Now().UnixNano()
		ts, err := strconv.ParseInt(m.Header.Get("Platform-Timestamp"), 10, 64)
		if err != nil {
			return
		}
		l.mu.Lock()
		l.arrived = append(l.arrived, now)
		l.stamps = append(l.stamps, ts)
		l.mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	if err := l.sub.SetPendingLimits(-1, -1); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *latencyProbe) start(origin time.Time) {
	l.mu.Lock()
	l.origin = origin
	l.mu.Unlock()
}

// wait waits until rows messages have arrived (a few seconds at most
// after the job ended) and returns their latencies. It leaves out the
// records stamped after last, the time of the last event: the results of
// windows that end after the input, which its end fires.
func (l *latencyProbe) wait(rows, last int64) ([]time.Duration, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := int64(len(l.arrived))
		l.mu.Unlock()
		if n >= rows {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the latency probe got %d of the sink's %d records", n, rows)
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]time.Duration, 0, len(l.arrived))
	for i, at := range l.arrived {
		if l.stamps[i] > last {
			continue
		}
		made := l.origin.Add(time.Duration(l.stamps[i]-nexmark.DefaultBaseTime) * time.Millisecond)
		out = append(out, time.Duration(at-made.UnixNano()))
	}
	return out, nil
}

func (l *latencyProbe) close() {
	_ = l.sub.Unsubscribe()
	_ = l.js.DeleteStream(context.Background(), l.stream)
}
