package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// streamMessages reads every message of a stream, in order. Sequences a
// stream no longer holds (a KV bucket's replaced entries) are gaps, not
// messages, and are passed over.
func streamMessages(t testing.TB, js jetstream.JetStream, name string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// streamValues reads every message of a stream, in order.
func streamValues(t *testing.T, js jetstream.JetStream, name string) []string {
	t.Helper()
	var out []string
	for _, m := range streamMessages(t, js, name) {
		out = append(out, string(m.Data))
	}
	return out
}

// running fails the test when the job has stopped running.
func running(t *testing.T, m *Manager, id string) bool {
	t.Helper()
	info, err := m.GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != StateRunning && info.State != StateCreated {
		t.Fatalf("job %s: %s %s", id, info.State, info.Failure)
	}
	return true
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A job's per-window state goes into its savepoint and comes back in a job
// at another parallelism and with another state backend: a late record
// after the restore fires its window the second time, and the function
// says so.
func TestWindowStateSavepointJob(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	mod, err := m.UploadModule(ctx, wasmbuild.UDF(t, "firings"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []jetstream.StreamConfig{{Name: "IN", Subjects: []string{"in"}}, {Name: "OUT", Subjects: []string{"out"}}} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	const keys = 12
	publish := func(ts int64) {
		for k := 0; k < keys; k++ {
			if _, err := js.Publish(ctx, "in", fmt.Appendf(nil, `{"user":"k%02d","ts":%d}`, k, ts)); err != nil {
				t.Fatal(err)
			}
		}
	}
	spec := func(p int, backend string) string {
		return fmt.Sprintf(`
name: firings
state: {backend: %s}
checkpoint: {interval: 1h, mode: at_least_once}
sources: [{id: in, jetstream: {stream: IN, subjects: [in]}, timestamp: {field: ts},
  watermark: {strategy: bounded_out_of_orderness, max_out_of_orderness: 0s, interval: 10ms}}]
operators: [{id: win, input: in, parallelism: %d, key_by: {field: user}, window: {type: tumbling, size: 10s},
  allowed_lateness: 1h, process_window: {module: %s, function: count}}]
sinks: [{id: out, input: win, jetstream: {subject: out}}]
`, backend, p, mod.ID)
	}
	want := func(firing, records int) []string {
		var out []string
		for k := 0; k < keys; k++ {
			out = append(out, fmt.Sprintf("k%02d [0,10000) firing %d: %d records", k, firing, records))
		}
		return out
	}
	sorted := func(from int) func() []string {
		return func() []string {
			got := streamValues(t, js, "OUT")
			return slices.Sorted(slices.Values(got[min(from, len(got)):]))
		}
	}

	publish(1000)
	// A record of another key moves the watermark past the first window.
	if _, err := js.Publish(ctx, "in", []byte(`{"user":"clock","ts":15000}`)); err != nil {
		t.Fatal(err)
	}
	first, err := m.SubmitJob(ctx, []byte(spec(1, "memory")))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first firings", func() bool { return running(t, m, first.ID) && len(streamValues(t, js, "OUT")) >= keys })
	if got := sorted(0)(); !slices.Equal(got, want(1, 1)) {
		t.Fatalf("first firings %q, want %q", got, want(1, 1))
	}
	sp := waitSavepoint(t, m, first.ID, false)
	if _, err := m.CancelJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}

	publish(2000)
	second, err := m.SubmitJobFromSavepoint(ctx, []byte(spec(3, "pebble")), sp, false)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second firings", func() bool { return running(t, m, second.ID) && len(streamValues(t, js, "OUT")) >= 2*keys })
	if got := sorted(keys)(); !slices.Equal(got, want(2, 2)) {
		t.Fatalf("firings after the restore %q, want %q", got, want(2, 2))
	}
	if _, err := m.CancelJob(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
}
