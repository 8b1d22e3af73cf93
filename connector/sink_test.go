package connector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
)

func newSink(t *testing.T, ts *testServer, cfg JetStreamSinkConfig) *JetStreamSink {
	t.Helper()
	sink, err := NewJetStreamSink(testCtx(t), ts.js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	return sink
}

// readBack reads every message of stream with an ordered consumer, as
// "subject|payload|headers" with headers sorted by name.
func readBack(t *testing.T, ts *testServer, stream string) []string {
	t.Helper()
	ctx := testCtx(t)
	st, err := ts.js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for name, vs := range m.Header {
			for _, v := range vs {
				hs = append(hs, name+"="+v)
			}
		}
		slices.Sort(hs)
		out = append(out, m.Subject+"|"+string(m.Data)+"|"+strings.Join(hs, ";"))
	}
	return out
}

func TestJetStreamSinkPublishesWithHeaders(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "OUT", "out.>"); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t, ts, JetStreamSinkConfig{Subject: "out.x"})
	recs := []abi.Record{
		{Key: []byte("user-1"), Value: []byte(`{"n":1}`), Timestamp: 1_700_000_000_123},
		{Value: []byte("no key"), Timestamp: -5},
		{Key: []byte("k"), Value: []byte("with headers"), Timestamp: 7, Headers: []abi.Header{
			{Name: []byte("Trace"), Value: []byte("a")},
			{Name: []byte("Trace"), Value: []byte("b")},
			{Name: []byte(HeaderKey), Value: []byte("stale")},
		}},
		{Key: []byte("empty value"), Timestamp: 8},
	}
	if err := sink.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`out.x|{"n":1}|Platform-Key=user-1;Platform-Timestamp=1700000000123`,
		`out.x|no key|Platform-Key=;Platform-Timestamp=-5`,
		`out.x|with headers|Platform-Key=k;Platform-Timestamp=7;Trace=a;Trace=b`,
		`out.x||Platform-Key=empty value;Platform-Timestamp=8`,
	}
	if got := readBack(t, ts, "OUT"); !slices.Equal(got, want) {
		t.Fatalf("stream holds\n%q\nwant\n%q", got, want)
	}
}

func TestJetStreamSinkBoundsInFlight(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "OUT", "out.>"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		maxInFlight, wantBound int
	}{
		{1, 1},
		{8, 8},
		{0, DefaultMaxInFlight},
	}
	const total = 2000
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.maxInFlight), func(t *testing.T) {
			subject := fmt.Sprintf("out.m%d", tt.maxInFlight)
			sink := newSink(t, ts, JetStreamSinkConfig{Subject: subject, MaxInFlight: tt.maxInFlight})
			var b abi.Batch
			for i := 0; i < total; {
				b.Reset()
				for ; b.Len() < 100; i++ {
					b.AppendParts(nil, fmt.Appendf(nil, "%d", i), int64(i), nil)
				}
				if err := sink.Write(ctx, b.Records); err != nil {
					t.Fatal(err)
				}
				if n := sink.InFlight(); n > tt.wantBound {
					t.Fatalf("%d in flight, bound %d", n, tt.wantBound)
				}
			}
			if err := sink.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if n := sink.InFlight(); n != 0 {
				t.Fatalf("%d in flight after Flush", n)
			}
			st, err := ts.js.Stream(ctx, "OUT")
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
			if err != nil {
				t.Fatal(err)
			}
			if got := info.State.Subjects[subject]; got != total {
				t.Fatalf("stream holds %d messages on %s, want %d", got, subject, total)
			}
		})
	}
}

func TestJetStreamSinkErrors(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "OUT", "out.>"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  JetStreamSinkConfig
		is   error
		want string
	}{
		{"no stream", JetStreamSinkConfig{Subject: "nowhere.x"}, jetstream.ErrStreamNotFound, `"nowhere.x": no stream captures the subject`},
		{"wildcard", JetStreamSinkConfig{Subject: "out.*"}, nil, "must be a literal subject"},
		{"empty subject", JetStreamSinkConfig{}, nil, "must be a literal subject"},
		{"negative bound", JetStreamSinkConfig{Subject: "out.x", MaxInFlight: -1}, nil, "MaxInFlight -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewJetStreamSink(ctx, ts.js, tt.cfg)
			if err == nil {
				t.Fatal("NewJetStreamSink succeeded")
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

func TestJetStreamSinkRejectsBadHeaders(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "OUT", "out.>"); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t, ts, JetStreamSinkConfig{Subject: "out.x"})
	tests := []struct {
		name string
		rec  abi.Record
	}{
		{"key with newline", abi.Record{Key: []byte("a\nb")}},
		{"header value with CR", abi.Record{Headers: []abi.Header{{Name: []byte("H"), Value: []byte("a\rb")}}}},
		{"header name with colon", abi.Record{Headers: []abi.Header{{Name: []byte("H:x"), Value: []byte("v")}}}},
		{"empty header name", abi.Record{Headers: []abi.Header{{Value: []byte("v")}}}},
	}
	for _, tt := range tests {
		if err := sink.Write(ctx, []abi.Record{tt.rec}); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: Write = %v, want ErrBadHeader", tt.name, err)
		}
	}
}

func TestJetStreamSinkReportsFailedPublish(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if err := EnsureStream(ctx, ts.js, "OUT", "out.>"); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t, ts, JetStreamSinkConfig{Subject: "out.x", MaxInFlight: 4})
	if err := ts.js.DeleteStream(ctx, "OUT"); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, []abi.Record{{Value: []byte("lost")}}); err != nil {
		t.Fatal(err)
	}
	err := sink.Flush(ctx)
	if !errors.Is(err, jetstream.ErrNoStreamResponse) || !strings.Contains(err.Error(), `publish to "out.x"`) {
		t.Fatalf("Flush = %v, want a no-stream error naming out.x", err)
	}
	if err2 := sink.Write(ctx, []abi.Record{{Value: []byte("after")}}); err2 != err {
		t.Fatalf("Write after a failure = %v, want the first error %v", err2, err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close = %v, want ErrClosed", err)
	}
}
