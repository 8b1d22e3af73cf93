package lookup

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
)

// call is a record call of udfs/lookup's function on a guest of its own.
func call(t testing.TB, function string) operator.RecordCall {
	t.Helper()
	mod := optest.Module(t, "lookup")
	i := mod.Description.Lookup(function)
	if i < 0 {
		t.Fatalf("no function %s", function)
	}
	return operator.RecordCall{Module: "lookup", Function: function, Fn: i, Guest: mod.NewGuest(host.InstanceConfig{})}
}

// config is an ordered operator of udfs/lookup in front of tape, with
// request function request ("" for none), on_udf_error fail.
func config(t testing.TB, request string, tape operator.Stage, f Fetcher) Config {
	policy, _ := optest.FailPolicy("look")
	cfg := Config{Vertex: "look", Result: call(t, "join"), Capacity: 16, MaxBytes: 1 << 20, Timeout: 10 * time.Second,
		Ordered: true, BatchSize: 64, Policy: policy, Fetch: f, Next: tape}
	if request != "" {
		c := call(t, request)
		cfg.Request = &c
	}
	return cfg
}

// kvBucket starts an embedded NATS server with a KV bucket "users" holding
// entries, and returns its JetStream.
func kvBucket(t *testing.T, entries map[string]string) jetstream.JetStream {
	t.Helper()
	ctx := context.Background()
	srv, err := connector.StartEmbedded(ctx, connector.EmbeddedConfig{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(ctx) })
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "users"})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range entries {
		if _, err := kv.PutString(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	return js
}

// server is an HTTP server on loopback whose handler answers /users/NAME
// with {"name":"NAME"}, counts requests by path, and holds a path back
// while hold has a gate for it.
type server struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	holds map[string]chan struct{}
	// served gets each path once its answer is written.
	served chan string
	// fail answers a path with 500 this many times first.
	fail map[string]int
	// tokens, when set, holds every request until it takes a token;
	// inFlight and maxInFlight count the requests being served.
	tokens      chan struct{}
	inFlight    int
	maxInFlight int
}

func newServer(t *testing.T) *server {
	s := &server{hits: map[string]int{}, holds: map[string]chan struct{}{}, fail: map[string]int{}, served: make(chan string, 1024)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	tokens := s.tokens
	gate := s.holds[r.URL.Path]
	failing := s.fail[r.URL.Path] > 0
	if failing {
		s.fail[r.URL.Path]--
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if tokens != nil {
		select {
		case <-tokens:
		case <-r.Context().Done():
			return
		}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/users/")
	switch {
	case failing:
		w.WriteHeader(http.StatusInternalServerError)
	case !ok:
		w.WriteHeader(http.StatusNotFound)
	default:
		_, _ = io.WriteString(w, `{"name":"`+name+`"}`)
	}
	s.served <- r.URL.Path
}

// hold makes path wait until the returned function is called.
func (s *server) hold(path string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate := make(chan struct{})
	s.holds[path] = gate
	return sync.OnceFunc(func() { close(gate) })
}

func (s *server) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// fetchers reach s only.
func (s *server) fetchers() *Fetchers {
	host := strings.TrimPrefix(s.URL, "http://")
	return &Fetchers{Allow: func(u *url.URL) bool { return u.Host == host }}
}

// order is a record whose value names the URL of user on s.
func (s *server) order(key, user string, ts int64) abi.Record {
	return abi.Record{Key: []byte(key), Value: []byte(`{"url":"` + s.URL + `/users/` + user + `"}`), Timestamp: ts}
}

// tickUntil ticks op until tape has n lines.
func tickUntil(t *testing.T, op *Op, tape *optest.Tape, n int) {
	t.Helper()
	ctx := context.Background()
	for len(tape.Lines) < n {
		if err := op.Tick(ctx, 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
