package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exec"
)

// TestNATSLossPausesJobs: the NATS server goes away for a few seconds
// while an exactly-once job without a restart strategy runs; the job
// stalls, goes on once it is back, and its output is exact.
func TestNATSLossPausesJobs(t *testing.T) {
	ctx := context.Background()
	storeDir := t.TempDir()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: storeDir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.ClientURL())
	port, _ := strconv.Atoi(u.Port())
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "runtime-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	log := &syncBuffer{}
	m, err := NewManager(ctx, Config{DataDir: t.TempDir(), Host: newTestHost(t), JetStream: js, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	p := &recoveryPlatform{t: t, js: js, m: m, log: log}
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 2000)
	info, err := m.SubmitJob(ctx, []byte(`
name: pass
checkpoint: {interval: 100ms, mode: exactly_once}
sources: [{id: in, jetstream: {stream: IN}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first 2000 out", func() bool { return streamMsgs(js, "OUT") == 2000 })

	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the outage: many checkpoint intervals and fetches
	srv, err = connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: storeDir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the connection back", func() bool { return nc.IsConnected() })
	p.publish("in", 2000, 4000)
	waitFor(t, "all 4000 out", func() bool { return streamMsgs(js, "OUT") >= 4000 })
	time.Sleep(500 * time.Millisecond) // a duplicate would arrive within a checkpoint or two
	if n := streamMsgs(js, "OUT"); n != 4000 {
		t.Fatalf("OUT holds %d messages, want exactly 4000", n)
	}
	got := p.info(info.ID)
	if got.State != StateRunning {
		t.Fatalf("job is %s (%s), want RUNNING after NATS came back", got.State, got.Failure)
	}
	seen := map[string]bool{}
	cons, err := js.OrderedConsumer(ctx, "OUT", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for range 4000 {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		seen[string(msg.Data())] = true
	}
	for i := range 4000 {
		if v := fmt.Sprintf("v%d", i); !seen[v] {
			t.Fatalf("%s missing from OUT", v)
		}
	}
}

// streamMsgs is the number of messages stream holds (0 when unreachable).
func streamMsgs(js jetstream.JetStream, stream string) uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0
	}
	return st.CachedInfo().State.Msgs
}

// fakeLink is a NATS connection the test takes down and brings back.
type fakeLink struct {
	mu         sync.Mutex
	up         chan struct{}
	reconnects uint64
}

func (l *fakeLink) down() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up = make(chan struct{})
}

func (l *fakeLink) back() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reconnects++
	close(l.up)
}

func (l *fakeLink) Reconnects() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reconnects
}

func (l *fakeLink) WaitConnected(ctx context.Context) error {
	l.mu.Lock()
	up := l.up
	l.mu.Unlock()
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestFailureDuringNATSLossDoesNotCount: a job without a restart strategy
// fails while NATS is lost; it waits for NATS and restarts, instead of
// failing for good, and a failure with NATS up still fails it.
func TestFailureDuringNATSLossDoesNotCount(t *testing.T) {
	ctx := context.Background()
	m := newTestManager(t)
	link := &fakeLink{up: make(chan struct{})}
	close(link.up)
	m.env.NATS = link
	var fail atomic.Bool
	m.env.Faults = func(point, _, _ string) error {
		if point == exec.FaultProcess && fail.CompareAndSwap(true, false) {
			return errors.New("injected")
		}
		return nil
	}
	info, err := m.SubmitJob(ctx, []byte(`
name: gen
checkpoint: {interval: 1s}
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
sinks: [{id: out, input: gen, discard: true}]
`))
	if err != nil {
		t.Fatal(err)
	}
	get := func() JobInfo { got, _ := m.GetJob(ctx, info.ID); return got }
	waitFor(t, "running", func() bool { return get().State == StateRunning })
	link.down()
	fail.Store(true)
	waitFor(t, "restarting in the outage", func() bool { return get().State == StateRestarting })
	link.back()
	waitFor(t, "running again", func() bool { g := get(); return g.State == StateRunning && g.Restarts == 1 })
	fail.Store(true)
	waitFor(t, "failed, NATS being up", func() bool { return get().State == StateFailed })
}
