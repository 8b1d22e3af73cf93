package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
)

// got is a record read by a test, copied out of its batch.
type got struct {
	value   string
	ts      int64
	headers string // "name=value" pairs joined by ";"
}

func gotOf(r *abi.Record) got {
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, string(h.Name)+"="+string(h.Value))
	}
	return got{value: string(r.Value), ts: r.Timestamp, headers: strings.Join(hs, ";")}
}

// readToEOF fetches from a bounded source until io.EOF.
func readToEOF(t *testing.T, src Source) []got {
	t.Helper()
	var out []got
	var b abi.Batch
	for empty := 0; ; {
		b.Reset()
		err := src.Fetch(testCtx(t), &b, 100, 5*time.Second)
		for i := range b.Records {
			out = append(out, gotOf(&b.Records[i]))
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() == 0 {
			if empty++; empty == 3 {
				t.Fatalf("no end after %d records", len(out))
			}
		}
	}
}

// readN fetches from an unbounded source until it has n records.
func readN(t *testing.T, src Source, n int) []got {
	t.Helper()
	var out []got
	var b abi.Batch
	for empty := 0; len(out) < n; {
		b.Reset()
		if err := src.Fetch(testCtx(t), &b, n-len(out), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		for i := range b.Records {
			out = append(out, gotOf(&b.Records[i]))
		}
		if b.Len() == 0 {
			if empty++; empty == 3 {
				t.Fatalf("got %d records, want %d", len(out), n)
			}
		}
	}
	return out
}

// published is what a test publishes, with what the source must make of it.
type published struct {
	subject string
	seq     uint64
	want    got
}

// publish sends count messages round-robin over subjects; every fifth has
// headers, one of them repeated.
func publish(t *testing.T, ts *testServer, stream string, subjects []string, from, count int) []published {
	t.Helper()
	ctx := testCtx(t)
	st, err := ts.js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []published
	for i := from; i < from+count; i++ {
		msg := nats.NewMsg(subjects[i%len(subjects)])
		msg.Data = fmt.Appendf(nil, "m-%d", i)
		headers := ""
		if i%5 == 0 {
			msg.Header.Add("X-Rep", "1")
			msg.Header.Add("X-Rep", "2")
			msg.Header.Add("A-First", fmt.Sprint(i))
			headers = fmt.Sprintf("A-First=%d;X-Rep=1;X-Rep=2", i)
		}
		ack, err := ts.js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := st.GetMsg(ctx, ack.Sequence)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, published{
			subject: msg.Subject,
			seq:     ack.Sequence,
			want:    got{value: string(msg.Data), ts: stored.Time.UnixMilli(), headers: headers},
		})
	}
	return out
}

func sortGot(gs []got) []got {
	slices.SortFunc(gs, func(a, b got) int { return strings.Compare(a.value, b.value) })
	return gs
}

// expect is the sorted records of the messages on subjects, and the last
// sequence per subject.
func expect(pubs []published, subjects ...string) ([]got, map[string]uint64) {
	var gs []got
	last := map[string]uint64{}
	for _, p := range pubs {
		if slices.Contains(subjects, p.subject) {
			gs = append(gs, p.want)
			last[p.subject] = p.seq
		}
	}
	return sortGot(gs), last
}

func newSource(t *testing.T, ts *testServer, cfg JetStreamSourceConfig) *JetStreamSource {
	t.Helper()
	src, err := NewJetStreamSource(testCtx(t), ts.js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := src.Close(); err != nil {
			t.Error(err)
		}
	})
	return src
}

func TestJetStreamSourceBoundedSplitsFilters(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	pubs := publish(t, ts, "EV", []string{"ev.a", "ev.b", "ev.c", "ev.d"}, 0, 400)
	filters := []string{"ev.a", "ev.b", "ev.c"}
	tests := []struct {
		subtask  int
		subjects []string
	}{
		{0, []string{"ev.a", "ev.c"}},
		{1, []string{"ev.b"}},
	}
	var all []got
	for _, tt := range tests {
		src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: filters, Bounded: true, Subtask: tt.subtask, Parallelism: 2})
		gs := sortGot(readToEOF(t, src))
		want, last := expect(pubs, tt.subjects...)
		if !slices.Equal(gs, want) {
			t.Fatalf("subtask %d read %d records, want %d:\n got %v\nwant %v", tt.subtask, len(gs), len(want), gs, want)
		}
		if !maps.Equal(src.End(), last) || !maps.Equal(src.Positions(), last) {
			t.Fatalf("subtask %d: End %v Positions %v, want both %v", tt.subtask, src.End(), src.Positions(), last)
		}
		all = append(all, gs...)
	}
	want, _ := expect(pubs, filters...)
	if !slices.Equal(sortGot(all), want) {
		t.Fatalf("the subtasks read %d records, want each of %d once", len(all), len(want))
	}
}

func TestJetStreamSourceBoundedIgnoresLaterMessages(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	subjects := []string{"ev.a", "ev.b"}
	before := publish(t, ts, "EV", subjects, 0, 50)
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: subjects, Bounded: true, Parallelism: 1})
	publish(t, ts, "EV", subjects, 50, 50)
	want, _ := expect(before, subjects...)
	if gs := sortGot(readToEOF(t, src)); !slices.Equal(gs, want) {
		t.Fatalf("read %v, want %v", gs, want)
	}
}

func TestJetStreamSourceWholeStream(t *testing.T) {
	ts := startServer(t)
	if err := EnsureStream(testCtx(t), ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	subjects := []string{"ev.a", "ev.b", "ev.c"}
	pubs := publish(t, ts, "EV", subjects, 0, 30)
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Bounded: true, Parallelism: 1})
	want, _ := expect(pubs, subjects...)
	if gs := sortGot(readToEOF(t, src)); !slices.Equal(gs, want) {
		t.Fatalf("read %v, want %v", gs, want)
	}
	if end := src.End(); !maps.Equal(end, map[string]uint64{">": 30}) {
		t.Fatalf("End = %v, want >: 30", end)
	}
}

func TestJetStreamSourceEndAndStart(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	// On one subject, message m-i has stream sequence i+1.
	pubs := publish(t, ts, "EV", []string{"ev.a"}, 0, 10)
	values := func(from, to uint64) []got { // sequences from..to
		var gs []got
		for _, p := range pubs {
			if p.seq >= from && p.seq <= to {
				gs = append(gs, p.want)
			}
		}
		return sortGot(gs)
	}
	tests := []struct {
		name       string
		start, end map[string]uint64
		want       []got
		wantPos    uint64
	}{
		{"end fixed", nil, map[string]uint64{"ev.a": 6}, values(1, 6), 6},
		{"start", map[string]uint64{"ev.a": 4}, nil, values(5, 10), 10},
		{"start and end", map[string]uint64{"ev.a": 4}, map[string]uint64{"ev.a": 7}, values(5, 7), 7},
		{"start at end", map[string]uint64{"ev.a": 10}, nil, nil, 10},
		{"end zero", nil, map[string]uint64{"ev.a": 0}, nil, 0},
		{"end beyond the last message", nil, map[string]uint64{"ev.a": 12}, values(1, 10), 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a"}, Bounded: true, Parallelism: 1, Start: tt.start, End: tt.end})
			if gs := sortGot(readToEOF(t, src)); !slices.Equal(gs, tt.want) {
				t.Fatalf("read %v, want %v", gs, tt.want)
			}
			if pos := src.Positions()["ev.a"]; pos != tt.wantPos {
				t.Fatalf("position %d, want %d", pos, tt.wantPos)
			}
		})
	}
	t.Run("unbounded start", func(t *testing.T) {
		src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a"}, Parallelism: 1, Start: map[string]uint64{"ev.a": 8}})
		if gs := sortGot(readN(t, src, 2)); !slices.Equal(gs, values(9, 10)) {
			t.Fatalf("read %v, want %v", gs, values(9, 10))
		}
	})
	t.Run("messages removed before reading", func(t *testing.T) {
		if err := EnsureStream(ctx, ts.js, "GONE", "gone.>"); err != nil {
			t.Fatal(err)
		}
		publish(t, ts, "GONE", []string{"gone.a"}, 0, 5)
		ends, err := BoundedEnd(ctx, ts.js, "GONE", []string{"gone.a"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := ts.js.Stream(ctx, "GONE")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Purge(ctx); err != nil {
			t.Fatal(err)
		}
		src := newSource(t, ts, JetStreamSourceConfig{Stream: "GONE", Subjects: []string{"gone.a"}, Bounded: true, Parallelism: 1, End: ends})
		if gs := readToEOF(t, src); len(gs) != 0 {
			t.Fatalf("read %v from a purged stream", gs)
		}
	})
}

func TestBoundedEnd(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	publish(t, ts, "EV", []string{"ev.a", "ev.b"}, 0, 5) // a: 1 3 5, b: 2 4
	tests := []struct {
		subjects []string
		want     map[string]uint64
	}{
		{[]string{"ev.a", "ev.b", "ev.c"}, map[string]uint64{"ev.a": 5, "ev.b": 4, "ev.c": 0}},
		{[]string{"ev.*"}, map[string]uint64{"ev.*": 5}},
		{nil, map[string]uint64{">": 5}},
	}
	for _, tt := range tests {
		ends, err := BoundedEnd(ctx, ts.js, "EV", tt.subjects)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(ends, tt.want) {
			t.Errorf("BoundedEnd(%q) = %v, want %v", tt.subjects, ends, tt.want)
		}
	}
}

func TestJetStreamSourceUnboundedFollows(t *testing.T) {
	ts := startServer(t)
	if err := EnsureStream(testCtx(t), ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	subjects := []string{"ev.a", "ev.b"}
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: subjects, Parallelism: 1})
	var all []published
	for round := range 3 {
		pubs := publish(t, ts, "EV", subjects, round*20, 20)
		all = append(all, pubs...)
		want, _ := expect(pubs, subjects...)
		if gs := sortGot(readN(t, src, len(want))); !slices.Equal(gs, want) {
			t.Fatalf("round %d: read %v, want %v", round, gs, want)
		}
	}
	_, last := expect(all, subjects...)
	if !maps.Equal(src.Positions(), last) {
		t.Fatalf("Positions %v, want %v", src.Positions(), last)
	}
	if src.End() != nil {
		t.Fatalf("End %v of an unbounded source, want nil", src.End())
	}
}

func TestJetStreamSourceSubtaskWithoutFilters(t *testing.T) {
	ts := startServer(t)
	if err := EnsureStream(testCtx(t), ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	publish(t, ts, "EV", []string{"ev.a", "ev.b"}, 0, 4)
	tests := []struct {
		bounded bool
		want    error
	}{
		{true, io.EOF},
		{false, nil},
	}
	for _, tt := range tests {
		src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a", "ev.b"}, Bounded: tt.bounded, Subtask: 2, Parallelism: 3})
		var b abi.Batch
		if err := src.Fetch(testCtx(t), &b, 10, time.Millisecond); err != tt.want || b.Len() != 0 {
			t.Errorf("bounded %v: Fetch = %v with %d records, want %v with none", tt.bounded, err, b.Len(), tt.want)
		}
	}
}

func TestJetStreamSourceConfigErrors(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  JetStreamSourceConfig
		is   error
		want string
	}{
		{"missing stream", JetStreamSourceConfig{Stream: "NOPE", Parallelism: 1}, jetstream.ErrStreamNotFound, `stream "NOPE"`},
		{"overlapping filters", JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a", "ev.*"}, Parallelism: 1}, nil, `"ev.a" and "ev.*" overlap`},
		{"repeated filter", JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a", "ev.a"}, Parallelism: 1}, nil, "overlap"},
		{"empty filter", JetStreamSourceConfig{Stream: "EV", Subjects: []string{""}, Parallelism: 1}, nil, "filter 0 is empty"},
		{"subtask out of range", JetStreamSourceConfig{Stream: "EV", Subtask: 2, Parallelism: 2}, nil, "subtask 2"},
		{"no parallelism", JetStreamSourceConfig{Stream: "EV"}, nil, "parallelism 0"},
		{"end without the filter", JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a"}, Bounded: true, Parallelism: 1, End: map[string]uint64{"ev.b": 3}}, nil, `no bounded end for filter "ev.a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := NewJetStreamSource(ctx, ts.js, tt.cfg)
			if err == nil {
				_ = src.Close()
				t.Fatal("NewJetStreamSource succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestJetStreamSourceCloseDeletesConsumers(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	publish(t, ts, "EV", []string{"ev.a", "ev.b"}, 0, 4)
	src, err := NewJetStreamSource(ctx, ts.js, JetStreamSourceConfig{Stream: "EV", Subjects: []string{"ev.a", "ev.b"}, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ts.js.Stream(ctx, "EV")
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	if n := consumers(); n != 2 {
		t.Fatalf("%d consumers while open, want 2", n)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if n := consumers(); n != 0 {
		t.Fatalf("%d consumers after Close, want 0", n)
	}
	var b abi.Batch
	if err := src.Fetch(ctx, &b, 1, 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Fetch after Close = %v, want ErrClosed", err)
	}
}

func TestJetStreamSourceFetchHonoursContext(t *testing.T) {
	ts := startServer(t)
	if err := EnsureStream(testCtx(t), ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "EV", Parallelism: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b abi.Batch
	if err := src.Fetch(ctx, &b, 1, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fetch = %v, want context.Canceled", err)
	}
}

func TestJetStreamSourceFailsOnLostConnection(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "EV", "ev.>"); err != nil {
		t.Fatal(err)
	}
	nc, js, err := Connect(ctx, ts.srv.ClientURL(), "lost")
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewJetStreamSource(ctx, js, JetStreamSourceConfig{Stream: "EV", Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	var b abi.Batch
	err = src.Fetch(ctx, &b, 10, time.Minute)
	if !errors.Is(err, jetstream.ErrConnectionClosed) || !strings.Contains(err.Error(), `read stream "EV" filter ">"`) {
		t.Fatalf("Fetch = %v, want a closed-connection error naming the stream and filter", err)
	}
	if err2 := src.Fetch(ctx, &b, 10, 0); err2 != err {
		t.Fatalf("second Fetch = %v, want the first error again", err2)
	}
	if err := src.Close(); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("Close = %v, want the failed consumer deletion", err)
	}
}

// TestJetStreamSourceReadsPastTheByteWindow: messages near the server's
// largest, more of them than the pull window's bytes hold, all arrive in
// order: the byte limit bounds each pull and never stalls the consumer.
func TestJetStreamSourceReadsPastTheByteWindow(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "BIG", "big.>"); err != nil {
		t.Fatal(err)
	}
	size := int(ts.js.Conn().MaxPayload()) - 1024
	n := pullBytes/size + 3
	for i := range n {
		value := fmt.Appendf(nil, "%06d", i)
		value = append(value, strings.Repeat("x", size-len(value))...)
		if _, err := ts.js.Publish(ctx, "big.a", value); err != nil {
			t.Fatal(err)
		}
	}
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "BIG", Bounded: true, Parallelism: 1})
	gs := readToEOF(t, src)
	if len(gs) != n {
		t.Fatalf("read %d messages, want %d", len(gs), n)
	}
	for i, g := range gs {
		if len(g.value) != size || g.value[:6] != fmt.Sprintf("%06d", i) {
			t.Fatalf("message %d: %d bytes starting %q, want %d bytes starting %06d", i, len(g.value), g.value[:6], size, i)
		}
	}
}
