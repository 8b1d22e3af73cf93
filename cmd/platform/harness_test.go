package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/runtime"
)

// testServer is a whole platform in the test process: embedded NATS on a free
// port, the host, the manager and the HTTP API on a free port.
type testServer struct {
	t    *testing.T
	s    *server
	base string
	js   jetstream.JetStream
	stop func()
	// token is sent with every call when set.
	token string
}

func startTestServer(t *testing.T) *testServer {
	t.Helper()
	return startTestServerIn(t, t.TempDir())
}

// startTestServerIn starts a platform on dataDir; its cleanup stops it, and
// stop may stop it earlier.
func startTestServerIn(t *testing.T, dataDir string) *testServer {
	t.Helper()
	return startTestServerWith(t, config{HTTPAddr: "127.0.0.1:0", DataDir: dataDir, NATSPort: -1, LogFormat: "text", LogLevel: "warn"})
}

// startTestServerWith starts a platform with cfg (HTTPAddr and NATSPort
// picking free ports).
func startTestServerWith(t *testing.T, cfg config) *testServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := startServer(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s.stop(ctx)
		})
	}
	t.Cleanup(stop)
	js, err := jetstream.New(s.nc)
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{t: t, s: s, base: "http://" + s.addr(), js: js, stop: stop, token: cfg.Token}
}

// call makes an API request and returns the status and body.
func (ts *testServer) call(method, path, contentType string, body []byte) (int, []byte) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.base+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// upload posts a module and returns its id.
func (ts *testServer) upload(wasm []byte) string {
	ts.t.Helper()
	status, body := ts.call(http.MethodPost, "/v1/modules", "application/wasm", wasm)
	if status != http.StatusCreated {
		ts.t.Fatalf("upload: %d %s", status, body)
	}
	var mod runtime.ModuleInfo
	if err := json.Unmarshal(body, &mod); err != nil {
		ts.t.Fatal(err)
	}
	return mod.ID
}

// submit posts a job spec and returns its id.
func (ts *testServer) submit(spec string) string {
	ts.t.Helper()
	status, body := ts.call(http.MethodPost, "/v1/jobs", "application/yaml", []byte(spec))
	if status != http.StatusCreated {
		ts.t.Fatalf("submit: %d %s", status, body)
	}
	var job runtime.JobInfo
	if err := json.Unmarshal(body, &job); err != nil {
		ts.t.Fatal(err)
	}
	return job.ID
}

// wait polls a job until it reaches a terminal state.
func (ts *testServer) wait(id string) runtime.JobInfo {
	ts.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		status, body := ts.call(http.MethodGet, "/v1/jobs/"+id, "", nil)
		if status != http.StatusOK {
			ts.t.Fatalf("get job: %d %s", status, body)
		}
		var job runtime.JobInfo
		if err := json.Unmarshal(body, &job); err != nil {
			ts.t.Fatal(err)
		}
		if job.State.Terminal() {
			return job
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("job %s still %s after 3 minutes", id, job.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stream creates a stream and publishes payloads to subjects round robin.
func (ts *testServer) stream(name string, subjects []string, payloads [][]byte) {
	ts.t.Helper()
	ctx := context.Background()
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: subjects, Storage: jetstream.FileStorage}); err != nil {
		ts.t.Fatal(err)
	}
	publishAll(ts.t, ts.js, payloads, func(i int) string { return subjects[i%len(subjects)] })
}

// read returns every message of a stream.
func (ts *testServer) read(name string) []jetstream.Msg {
	ts.t.Helper()
	return readStream(ts.t, ts.js, name, "")
}

// readStream returns every message of a stream, or of one subject of it.
func readStream(t *testing.T, js jetstream.JetStream, name, subject string) []jetstream.Msg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var opts []jetstream.StreamInfoOpt
	var filters []string
	if subject != "" {
		opts = append(opts, jetstream.WithSubjectFilter(subject))
		filters = []string{subject}
	}
	info, err := st.Info(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	want := info.State.Msgs
	if subject != "" {
		want = info.State.Subjects[subject]
	}
	if want == 0 {
		return nil
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: filters})
	if err != nil {
		t.Fatal(err)
	}
	// An ordered consumer that finds a gap in what it was sent (a slow
	// consumer on a loaded machine drops messages) starts again after the
	// last message it delivered, which can hand over a message twice: each
	// stream message is taken once, by its stream sequence, so that what
	// the test counts is what the stream holds.
	//
	// On a NATS cluster each fetch of an ordered consumer makes a consumer
	// on some node, and the fetch's request can reach the node this client
	// is on before the new consumer's interest has: it finds no responders.
	// Such a fetch is tried again, for at most 30 s without progress.
	var msgs []jetstream.Msg
	last := uint64(0)
	var stalled time.Time
	for uint64(len(msgs)) < want {
		// No more than are left, so that the last fetch does not wait
		// for messages that will not come.
		batch, err := cons.Fetch(int(min(want-uint64(len(msgs)), 1024)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n, got := len(msgs), 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			if md.Sequence.Stream <= last {
				continue
			}
			last = md.Sequence.Stream
			msgs = append(msgs, m)
		}
		if got == 0 && errors.Is(batch.Error(), nats.ErrNoResponders) {
			if stalled.IsZero() {
				stalled = time.Now()
			}
			if time.Since(stalled) < 30*time.Second {
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		if got == 0 {
			t.Fatalf("stream %s: read %d of %d messages: %v", name, n, want, batch.Error())
		}
		stalled = time.Time{}
	}
	return msgs
}
