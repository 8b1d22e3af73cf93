package lookup

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/operator/optest"
	"wasmstream.io/platform/state"
	"wasmstream.io/platform/watermark"
)

// KV lookups against a real bucket, asked for by a request function and by
// the spec's bucket, give exact outputs, and the watermark waits for the
// records before it.
func TestKVLookup(t *testing.T) {
	js := kvBucket(t, map[string]string{"u1": `{"name":"Ann"}`, "u2": `{"name":"Bo"}`})
	for _, tt := range []struct {
		name, request, bucket string
		recs                  []abi.Record
		want                  []string
	}{
		{"request function", "ask_kv", "", []abi.Record{
			{Key: []byte("o1"), Value: []byte(`{"user":"u1"}`), Timestamp: 1},
			{Key: []byte("o2"), Value: []byte(`{"user":"u9"}`), Timestamp: 2},
			{Key: []byte("o3"), Value: []byte(`{"user":"u2"}`), Timestamp: 3},
		}, []string{
			`o1@1 {"order":{"user":"u1"},"profile":{"name":"Ann"}}`,
			`o2@2 {"order":{"user":"u9"},"profile":null}`,
			`o3@3 {"order":{"user":"u2"},"profile":{"name":"Bo"}}`,
			"wm 10", `o4@11 {"order":{"user":"u1"},"profile":{"name":"Ann"}}`, "wm max",
		}},
		{"bucket of the spec", "", "users", []abi.Record{
			{Key: []byte("u2"), Value: []byte(`"a"`), Timestamp: 1},
			{Key: []byte("u3"), Value: []byte(`"b"`), Timestamp: 2},
			{Key: []byte("u1"), Value: []byte(`"c"`), Timestamp: 3},
		}, []string{
			`u2@1 {"order":"a","profile":{"name":"Bo"}}`,
			`u3@2 {"order":"b","profile":null}`,
			`u1@3 {"order":"c","profile":{"name":"Ann"}}`,
			"wm 10", `u1@11 {"order":"d","profile":{"name":"Ann"}}`, "wm max",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			tape := &optest.Tape{}
			cfg := config(t, tt.request, tape, &Fetchers{JetStream: js})
			cfg.Bucket = tt.bucket
			op := New(cfg)
			defer op.Close(ctx)
			last := abi.Record{Key: []byte("o4"), Value: []byte(`{"user":"u1"}`), Timestamp: 11}
			if tt.bucket != "" {
				last = abi.Record{Key: []byte("u1"), Value: []byte(`"d"`), Timestamp: 11}
			}
			steps := []func() error{
				func() error { return op.Process(ctx, tt.recs) },
				func() error { return op.Advance(ctx, 10) },
				func() error { return op.Process(ctx, []abi.Record{last}) },
				func() error { return op.Advance(ctx, watermark.MaxWatermark) },
				func() error { return op.Finish(ctx) },
			}
			for _, s := range steps {
				if err := s(); err != nil {
					t.Fatal(err)
				}
			}
			optest.CheckLines(t, "outputs", tape.Lines, tt.want)
		})
	}
}

// Ordered output keeps input order while a later lookup completes first;
// unordered output lets it overtake, but never past the watermark that
// followed its input.
func TestOrderedAndUnordered(t *testing.T) {
	for _, tt := range []struct {
		ordered bool
		want    []string
	}{
		{true, []string{`slow@1 {"order":{"url":"URL/users/slow"},"profile":{"name":"slow"}}`, `fast@2 {"order":{"url":"URL/users/fast"},"profile":{"name":"fast"}}`,
			"wm 5", `after@6 {"order":{"url":"URL/users/after"},"profile":{"name":"after"}}`}},
		{false, []string{`fast@2 {"order":{"url":"URL/users/fast"},"profile":{"name":"fast"}}`, `slow@1 {"order":{"url":"URL/users/slow"},"profile":{"name":"slow"}}`,
			"wm 5", `after@6 {"order":{"url":"URL/users/after"},"profile":{"name":"after"}}`}},
	} {
		t.Run(fmt.Sprintf("ordered=%v", tt.ordered), func(t *testing.T) {
			ctx := context.Background()
			srv := newServer(t)
			release := srv.hold("/users/slow")
			defer release()
			tape := &optest.Tape{}
			cfg := config(t, "ask_http", tape, srv.fetchers())
			cfg.Ordered = tt.ordered
			op := New(cfg)
			defer op.Close(ctx)
			if err := op.Process(ctx, []abi.Record{srv.order("slow", "slow", 1), srv.order("fast", "fast", 2)}); err != nil {
				t.Fatal(err)
			}
			if tt.ordered {
				for p := <-srv.served; p != "/users/fast"; p = <-srv.served {
				}
			} else {
				tickUntil(t, op, tape, 1)
			}
			if err := op.Advance(ctx, 5); err != nil {
				t.Fatal(err)
			}
			if err := op.Process(ctx, []abi.Record{srv.order("after", "after", 6)}); err != nil {
				t.Fatal(err)
			}
			release()
			if err := op.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.ReplaceAll(w, "URL", srv.URL)
			}
			optest.CheckLines(t, "outputs", tape.Lines, want)
		})
	}
}

// Over many records and watermarks with lookups completing in any order,
// ordered output is exactly the input order, and unordered output has
// exactly the inputs of each span between two watermarks in that span.
func TestOrderingProperties(t *testing.T) {
	for _, ordered := range []bool{true, false} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			ctx := context.Background()
			srv := newServer(t)
			tape := &optest.Tape{}
			cfg := config(t, "ask_http", tape, srv.fetchers())
			cfg.Ordered, cfg.Capacity = ordered, 7
			op := New(cfg)
			defer op.Close(ctx)
			var spans [][]string
			span := []string{}
			n := 0
			for w := 1; w <= 20; w++ {
				var recs []abi.Record
				for range w % 5 {
					n++
					k := fmt.Sprintf("k%d", n)
					recs = append(recs, srv.order(k, k, int64(n)))
					span = append(span, k)
				}
				if err := op.Process(ctx, recs); err != nil {
					t.Fatal(err)
				}
				if err := op.Advance(ctx, int64(w*100)); err != nil {
					t.Fatal(err)
				}
				spans, span = append(spans, span), []string{}
			}
			if err := op.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			var got [][]string
			cur := []string{}
			for _, l := range tape.Lines {
				if strings.HasPrefix(l, "wm ") {
					got, cur = append(got, cur), []string{}
					continue
				}
				cur = append(cur, l[:strings.IndexByte(l, '@')])
			}
			if len(got) != len(spans) || len(cur) != 0 {
				t.Fatalf("%d spans and %d records after the last, want %d and 0", len(got), len(cur), len(spans))
			}
			for i := range spans {
				g := got[i]
				if !ordered {
					g = sorted(g, spans[i])
				}
				if strings.Join(g, ",") != strings.Join(spans[i], ",") {
					t.Errorf("span %d: got %v, want %v", i, got[i], spans[i])
				}
			}
		})
	}
}

// sorted orders got as want is ordered, keeping what want lacks at the end.
func sorted(got, want []string) []string {
	pos := map[string]int{}
	for i, w := range want {
		pos[w] = i
	}
	out := make([]string, len(want))
	var extra []string
	for _, g := range got {
		if i, ok := pos[g]; ok && out[i] == "" {
			out[i] = g
			continue
		}
		extra = append(extra, g)
	}
	return append(out, extra...)
}

// A lookup that times out is tried again Retries times and then fails its
// record under the error policy; one that fails twice and then answers is
// emitted.
func TestTimeoutAndRetries(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	release := srv.hold("/users/hang")
	defer release()
	srv.fail["/users/flaky"] = 2
	tape := &optest.Tape{}
	cfg := config(t, "ask_http", tape, srv.fetchers())
	counts := &operator.ErrorCounts{}
	var reported []string
	cfg.Policy = &operator.ErrorPolicy{Mode: operator.OnErrorSkip, Vertex: "look", Counts: counts, Log: discardLog(),
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			reported = append(reported, string(rec.Key)+": "+cause.Error())
			return nil
		}}
	cfg.Timeout, cfg.Retries = 500*time.Millisecond, 2
	op := New(cfg)
	defer op.Close(ctx)
	if err := op.Process(ctx, []abi.Record{srv.order("hang", "hang", 1), srv.order("flaky", "flaky", 2), srv.order("ok", "ok", 3)}); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	optest.CheckLines(t, "outputs", tape.Lines, []string{
		strings.ReplaceAll(`flaky@2 {"order":{"url":"URL/users/flaky"},"profile":{"name":"flaky"}}`, "URL", srv.URL),
		strings.ReplaceAll(`ok@3 {"order":{"url":"URL/users/ok"},"profile":{"name":"ok"}}`, "URL", srv.URL),
	})
	if len(reported) != 1 || !strings.HasPrefix(reported[0], "hang: operator[look]: http lookup") || !strings.Contains(reported[0], "timed out after 500ms") || !strings.Contains(reported[0], "(3 attempts)") {
		t.Errorf("reported %q, want the hang record timed out after 3 attempts", reported)
	}
	if h, f := srv.hit("/users/hang"), srv.hit("/users/flaky"); h != 3 || f != 3 {
		t.Errorf("hang tried %d times, flaky %d, want 3 and 3", h, f)
	}
	if counts.UDFErrors.Load() != 1 {
		t.Errorf("%d udf errors, want 1", counts.UDFErrors.Load())
	}
}

// An HTTP lookup to a host not on the allow-list fails its record with an
// error naming the host, and the host is never called.
func TestAllowList(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	other := newServer(t)
	tape := &optest.Tape{}
	cfg := config(t, "ask_http", tape, srv.fetchers())
	var reported []string
	cfg.Policy = &operator.ErrorPolicy{Mode: operator.OnErrorSkip, Vertex: "look", Counts: &operator.ErrorCounts{}, Log: discardLog(),
		Report: func(_ context.Context, rec *abi.Record, cause error) error {
			reported = append(reported, string(rec.Key)+": "+cause.Error())
			return nil
		}}
	cfg.Retries = 3
	op := New(cfg)
	defer op.Close(ctx)
	if err := op.Process(ctx, []abi.Record{other.order("evil", "x", 1), srv.order("good", "y", 2)}); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(other.URL, "http://")
	want := fmt.Sprintf(`evil: operator[look]: http lookup "%s/users/x": lookup refused: http lookup to host %q: not on lookups.http.allow`, other.URL, host)
	if len(reported) != 1 || reported[0] != want {
		t.Errorf("reported %q, want %q", reported, want)
	}
	if other.hit("/users/x") != 0 {
		t.Errorf("the host not on the allow-list was called %d times", other.hit("/users/x"))
	}
	if len(tape.Lines) != 1 || !strings.HasPrefix(tape.Lines[0], "good@2 ") {
		t.Errorf("outputs %q, want the good record only", tape.Lines)
	}
}

// The records whose lookups are in flight at a snapshot are looked up again
// after a restore: every record is emitted exactly once across the two
// runs, and after a rescale to two subtasks each by exactly one of them.
func TestRestoreReissuesInFlight(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	release := srv.hold("/users/r2")
	recs := []abi.Record{srv.order("r1", "r1", 1), srv.order("r2", "r2", 2), srv.order("r3", "r3", 3), srv.order("r4", "r4", 4)}
	first := &optest.Tape{}
	op := New(config(t, "ask_http", first, srv.fetchers()))
	if err := op.Process(ctx, recs); err != nil {
		t.Fatal(err)
	}
	tickUntil(t, op, first, 1)
	blob, err := op.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Close(ctx); err != nil {
		t.Fatal(err)
	}
	release()
	for _, parallelism := range []int{1, 2} {
		t.Run(fmt.Sprintf("parallelism %d", parallelism), func(t *testing.T) {
			var all []string
			for sub := range parallelism {
				tape := &optest.Tape{}
				op := New(config(t, "ask_http", tape, srv.fetchers()))
				if err := op.Restore(ctx, []io.Reader{strings.NewReader(string(blob.Data))}, 128, state.RangeOf(128, parallelism, sub)); err != nil {
					t.Fatal(err)
				}
				if err := op.Finish(ctx); err != nil {
					t.Fatal(err)
				}
				_ = op.Close(ctx)
				all = append(all, tape.Lines...)
			}
			got := append(append([]string{}, first.Lines...), all...)
			keys := make([]string, len(got))
			for i, l := range got {
				keys[i] = l[:strings.IndexByte(l, '@')]
			}
			if parallelism > 1 {
				keys = append(keys[:1], sorted(keys[1:], []string{"r2", "r3", "r4"})...)
			}
			if strings.Join(keys, ",") != "r1,r2,r3,r4" {
				t.Errorf("emitted %v, want r1, r2, r3, r4 once each", keys)
			}
		})
	}
}

// The records in flight never exceed capacity, nor the records' half of
// max_bytes: with every lookup held, exactly that many reach the server
// before the first answer.
func TestBoundedInFlight(t *testing.T) {
	probeSrv := newServer(t)
	probe := probeSrv.order("k0", "k0", 0)
	// A record's share of the budget: itself and its request, whose
	// target is the url in its value.
	size := int64(probe.Size()) + int64(len(probeSrv.URL+"/users/k0")) + 16
	tests := []struct {
		name     string
		capacity int
		maxBytes int64
		want     int
	}{
		{"capacity", 3, 1 << 20, 3},
		{"bytes", 10, 2*(2*size+size/2) + 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := newServer(t)
			srv.tokens = make(chan struct{}, 100)
			tape := &optest.Tape{}
			cfg := config(t, "ask_http", tape, srv.fetchers())
			cfg.Capacity, cfg.MaxBytes = tt.capacity, tt.maxBytes
			op := New(cfg)
			defer op.Close(ctx)
			var recs []abi.Record
			for i := range 12 {
				k := fmt.Sprintf("k%d", i)
				recs = append(recs, srv.order(k, k, int64(i)))
			}
			done := make(chan error, 1)
			go func() { done <- op.Process(ctx, recs) }()
			for {
				srv.mu.Lock()
				n := srv.inFlight
				srv.mu.Unlock()
				if n == tt.want {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("Process returned (%v) with %d lookups in flight, want %d", err, n, tt.want)
				case <-time.After(time.Millisecond):
				}
			}
			for range 12 {
				srv.tokens <- struct{}{}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := op.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			if len(tape.Lines) != 12 {
				t.Fatalf("%d outputs, want 12", len(tape.Lines))
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.maxInFlight != tt.want {
				t.Errorf("%d lookups in flight at most, want %d", srv.maxInFlight, tt.want)
			}
		})
	}
}
