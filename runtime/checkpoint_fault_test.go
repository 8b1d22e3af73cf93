package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/internal/wasmbuild"
	"wasmstream.io/platform/runtime/exec"
)

// newTestJetStream starts an embedded NATS server for the test and connects
// to it; both end with the test.
func newTestJetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	nc, js, err := connector.Connect(ctx, srv.ClientURL(), "runtime-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return js
}

// newJetStreamManager is a manager with an embedded NATS server.
func newJetStreamManager(t testing.TB) (*Manager, jetstream.JetStream) {
	t.Helper()
	ctx := context.Background()
	js := newTestJetStream(t)
	m, err := NewManager(ctx, Config{
		DataDir: t.TempDir(), Host: newTestHost(t), JetStream: js, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, js
}

// failureSchedule fails a job as Flink's failing-mapper test does: in
// processing and then in a snapshot, each once every more checkpoints
// completed; in the recovery after that; in processing once a checkpoint
// completed after it; and on close at the end.
type failureSchedule struct {
	m     *Manager
	job   string
	every int64

	mu       sync.Mutex
	injected []string
	// last is the checkpoints completed at the last failure.
	last int64
}

var errInjected = errors.New("injected failure")

func (f *failureSchedule) inject(point, job, task string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if job != f.job {
		return nil
	}
	done := int64(0)
	if j, ok := f.m.job(job); ok && j.x.Checkpoints != nil {
		done, _ = j.x.Checkpoints.History.Counts()
	}
	fail := func(what string) error {
		f.injected = append(f.injected, what)
		f.last = done
		return fmt.Errorf("%w: %s in %s after %d checkpoints", errInjected, what, task, done)
	}
	step, due := len(f.injected), done >= f.last+f.every
	switch {
	case step == 0 && point == exec.FaultProcess && due:
		return fail("processing")
	case step == 1 && point == exec.FaultSnapshot && due:
		return fail("snapshot")
	case step == 2 && point == exec.FaultRestore:
		return fail("recovery")
	case step == 3 && point == exec.FaultProcess && done > f.last:
		return fail("processing again")
	case step == 4 && point == exec.FaultClose:
		return fail("close")
	}
	return nil
}

// TestFailingMapperSchedule runs a keyed exactly-once job through the
// failure schedule and checks its output: lost = duplicated = out of order
// = 0, and keyed state always the previous record's.
func TestFailingMapperSchedule(t *testing.T) {
	const keys, perKey = 200, 500
	m, js, mod := newSeqcheckJob(t, keys, perKey)
	spec := fmt.Sprintf(`
name: failing
parallelism: 2
checkpoint: {interval: 20ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 10ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}}]
`, mod.ID)
	runFailureSchedule(t, m, []byte(spec), 2*time.Minute)
	checkSeqOutput(t, js, keys, perKey)
}

// runFailureSchedule runs the job of spec on m through the failure
// schedule, a failure every second checkpoint, and waits up to timeout for
// it to finish after all five failures. It returns the failures injected.
func runFailureSchedule(t *testing.T, m *Manager, spec []byte, timeout time.Duration) []string {
	t.Helper()
	ctx := context.Background()
	sched := &failureSchedule{m: m, every: 2}
	m.env.Faults = sched.inject
	// The job id is not known before it starts: the schedule learns it
	// before any checkpoint completes, which is before it can fire.
	sched.mu.Lock()
	info, err := m.SubmitJob(ctx, spec)
	if err != nil {
		sched.mu.Unlock()
		t.Fatal(err)
	}
	sched.job = info.ID
	sched.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err = m.WaitJob(wctx, info.ID)
	if err != nil || info.State != StateFinished {
		t.Fatalf("job %s: %s, %v", info.State, info.Failure, err)
	}
	sched.mu.Lock()
	injected := append([]string(nil), sched.injected...)
	sched.mu.Unlock()
	if len(injected) != 5 || info.Restarts != 5 {
		t.Fatalf("injected %q, %d restarts, %d checkpoints: the job ended before the whole schedule", injected, info.Restarts, info.Checkpoint.Completed)
	}
	t.Logf("failures %q, %d restarts, %d checkpoints", injected, info.Restarts, info.Checkpoint.Completed)
	return injected
}

// checkSeqOutput reads the OUT stream and asserts seqcheck's outputs are
// each key's 1..perKey exactly once, in order, with state intact.
// newSeqcheckJob starts a manager on JetStream with udfs/seqcheck uploaded,
// stream IN holding perKey sequence numbers for each of keys keys (over
// subjects in.0 to in.3) and an empty stream OUT on subject out.
func newSeqcheckJob(t *testing.T, keys, perKey int) (*Manager, jetstream.JetStream, ModuleInfo) {
	t.Helper()
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "seqcheck"))
	if err != nil {
		t.Fatal(err)
	}
	seqcheckInput(t, js, keys, perKey)
	return m, js, mod
}

// seqcheckInput makes the streams IN and OUT and publishes perKey records
// {"k": "key<k>", "s": <seq>} for each of keys keys on in.<k mod 4>.
func seqcheckInput(t *testing.T, js jetstream.JetStream, keys, perKey int) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in.>"}, Storage: jetstream.FileStorage},
		{Name: "OUT", Subjects: []string{"out"}, Storage: jetstream.FileStorage},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for s := 1; s <= perKey; s++ {
		for k := 0; k < keys; k++ {
			if _, err := js.PublishAsync(fmt.Sprintf("in.%d", k%4), fmt.Appendf(nil, `{"k":"key%d","s":%d}`, k, s)); err != nil {
				t.Fatal(err)
			}
		}
		if s%20 == 0 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
}

func checkSeqOutput(t *testing.T, js jetstream.JetStream, keys, perKey int) {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, "OUT")
	if err != nil {
		t.Fatal(err)
	}
	// Only subject out: in cluster mode the sinks' fences are messages on
	// other subjects of the stream.
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"out"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("out"))
	if err != nil {
		t.Fatal(err)
	}
	total := info.State.Subjects["out"]
	next := map[string]int64{}
	var lost, duplicated, disordered, badState int
	for read := uint64(0); read < total; {
		batch, err := cons.Fetch(4096, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := read
		for msg := range batch.Messages() {
			read++
			var o struct {
				K    string
				S, P int64
			}
			if err := json.Unmarshal(msg.Data(), &o); err != nil {
				t.Fatal(err)
			}
			switch want := next[o.K] + 1; {
			case o.S < want:
				duplicated++
			case o.S > want:
				disordered++
				next[o.K] = o.S
			default:
				next[o.K] = o.S
			}
			if o.P != o.S-1 {
				badState++
			}
		}
		if read == n {
			t.Fatalf("read %d of %d outputs", read, total)
		}
	}
	for k := 0; k < keys; k++ {
		lost += perKey - int(next[fmt.Sprintf("key%d", k)])
	}
	if lost+duplicated+disordered+badState > 0 || total != uint64(keys*perKey) {
		t.Fatalf("%d outputs: %d lost, %d duplicated, %d out of order, %d with a state that was not the previous record's",
			total, lost, duplicated, disordered, badState)
	}
}
