package connector

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"wasmstream.io/platform/abi"
)

// gapStream is a stream S of n messages m-0 to m-<n-1> (stream sequences 1
// to n) over subjects, round robin.
func gapStream(t *testing.T, ts *testServer, subjects []string, n int) jetstream.Stream {
	t.Helper()
	ctx := testCtx(t)
	st, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: subjects})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := ts.js.Publish(ctx, subjects[i%len(subjects)], fmt.Appendf(nil, "m-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// fetchErr fetches until the source fails, or fails the test after n
// records without an error.
func fetchErr(t *testing.T, src Source, n int) ([]string, error) {
	t.Helper()
	var out []string
	var b abi.Batch
	for empty := 0; ; {
		b.Reset()
		err := src.Fetch(testCtx(t), &b, 100, time.Second)
		for i := range b.Records {
			out = append(out, string(b.Records[i].Value))
		}
		if err != nil {
			return out, err
		}
		if b.Len() == 0 {
			if empty++; empty == 3 {
				t.Fatalf("no error after %d records: %v", len(out), out)
			}
		}
		if len(out) > n {
			t.Fatalf("no error after %d records: %v", len(out), out)
		}
	}
}

func values(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// TestJetStreamSourceGapWholeStream: a source of the whole stream resumed
// after sequence 5, whose sequences 6 and 7 were deleted, fails with a
// GapError; with on_gap: skip it goes on and reports the gap.
func TestJetStreamSourceGapWholeStream(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	st := gapStream(t, ts, []string{"s"}, 10)
	for _, seq := range []uint64{6, 7} {
		if err := st.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	cfg := JetStreamSourceConfig{Stream: "S", Subtask: 0, Parallelism: 1, Start: map[string]uint64{">": 5}, Name: "src"}
	got, err := fetchErr(t, newSource(t, ts, cfg), 0)
	want := `connector: source src: stream "S" filter ">": sequence gap after position 5: expected stream sequence 6, found stream sequence 8 ` +
		`(2 sequences of the stream were removed before the source read them); set the source's on_gap: skip to go on past gaps`
	var gap *GapError
	if len(got) != 0 || !errors.As(err, &gap) || !errors.Is(err, ErrGap) || err.Error() != want || gap.After != 5 || gap.Found != 8 {
		t.Fatalf("read %v, %v\nwant nothing and %s", got, err, want)
	}
	var gaps []*GapError
	cfg.OnGap, cfg.Gap = GapSkip, func(g *GapError) { gaps = append(gaps, g) }
	if got := readN(t, newSource(t, ts, cfg), 3); !slices.Equal(valuesOf(got), values("m-", 7, 10)) {
		t.Fatalf("read %v, want m-7 to m-9", got)
	}
	if len(gaps) != 1 || gaps[0].Filter != ">" || gaps[0].After != 5 || gaps[0].Found != 8 {
		t.Fatalf("gaps %+v", gaps)
	}
}

func valuesOf(gs []got) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.value
	}
	return out
}

// TestJetStreamSourceSubjectFilterInterleaves: the sequences of a subject
// filter jump over the other subjects' messages; that is no gap.
func TestJetStreamSourceSubjectFilterInterleaves(t *testing.T) {
	ts := startServer(t)
	gapStream(t, ts, []string{"a", "b", "c"}, 30)
	// m-3 is "a" at sequence 4; its next is m-6 at sequence 7.
	src := newSource(t, ts, JetStreamSourceConfig{Stream: "S", Subjects: []string{"a"}, Subtask: 0, Parallelism: 1, Start: map[string]uint64{"a": 4}, Name: "src"})
	var want []string
	for i := 6; i < 30; i += 3 {
		want = append(want, fmt.Sprintf("m-%d", i))
	}
	if got := valuesOf(readN(t, src, len(want))); !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if pos := src.Positions()["a"]; pos != 28 {
		t.Fatalf("position %d, want 28", pos)
	}
}

// TestJetStreamSourceGapSubjectFilter: messages right after a subject
// filter's checkpointed position were purged (the stream now starts past
// it): a gap, found when the filter resumes.
func TestJetStreamSourceGapSubjectFilter(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	st := gapStream(t, ts, []string{"a", "b"}, 20)
	// Keep sequences 9 on: "a" at 7 (m-6) was the filter's next message.
	if err := st.Purge(ctx, jetstream.WithPurgeSequence(9)); err != nil {
		t.Fatal(err)
	}
	cfg := JetStreamSourceConfig{Stream: "S", Subjects: []string{"a"}, Subtask: 0, Parallelism: 1, Start: map[string]uint64{"a": 5}, Name: "src"}
	got, err := fetchErr(t, newSource(t, ts, cfg), 0)
	want := `connector: source src: stream "S" filter "a": sequence gap after position 5: expected the filter's next message with none removed before it, ` +
		`found stream sequence 9 (the stream now starts at sequence 9: messages after 5 were removed before the source read them); set the source's on_gap: skip to go on past gaps`
	if len(got) != 0 || err == nil || err.Error() != want {
		t.Fatalf("read %v, %v\nwant nothing and %s", got, err, want)
	}
	// Deleting a message of another subject after the position counts too:
	// the stream does not say whose it was.
	if err := st.DeleteMsg(ctx, 12); err != nil {
		t.Fatal(err)
	}
	cfg.Start = map[string]uint64{"a": 11}
	got, err = fetchErr(t, newSource(t, ts, cfg), 0)
	want = `connector: source src: stream "S" filter "a": sequence gap after position 11: expected the filter's next message with none removed before it, ` +
		`found stream sequence 13 (message 12 after the position was deleted from the stream before the source read it); set the source's on_gap: skip to go on past gaps`
	if len(got) != 0 || err == nil || err.Error() != want {
		t.Fatalf("read %v, %v\nwant nothing and %s", got, err, want)
	}
	// Resumed where nothing was removed, the filter reads on.
	cfg.Start = map[string]uint64{"a": 13}
	if got := valuesOf(readN(t, newSource(t, ts, cfg), 3)); !slices.Equal(got, []string{"m-14", "m-16", "m-18"}) {
		t.Fatalf("read %v", got)
	}
}

func TestJetStreamSourceOnGapInvalid(t *testing.T) {
	ts := startServer(t)
	gapStream(t, ts, []string{"s"}, 1)
	_, err := NewJetStreamSource(testCtx(t), ts.js, JetStreamSourceConfig{Stream: "S", Subtask: 0, Parallelism: 1, OnGap: "ignore"})
	if want := `connector: source on stream "S": on_gap "ignore": want fail or skip`; err == nil || err.Error() != want {
		t.Fatalf("%v, want %s", err, want)
	}
}

// TestStreamLimitsOf reads a stream's retention and limits.
func TestStreamLimitsOf(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t)
	if _, err := ts.js.CreateStream(ctx, jetstream.StreamConfig{Name: "W", Subjects: []string{"w.>"}, Retention: jetstream.WorkQueuePolicy,
		MaxMsgs: 10, MaxAge: time.Minute, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	l, err := SubjectStreamLimits(ctx, ts.js, "w.x")
	want := StreamLimits{Stream: "W", Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew, MaxMsgs: 10, MaxBytes: -1, MaxAge: time.Minute, MaxMsgsPerSubject: -1}
	if err != nil || l != want || l.Replayable() || !l.Limited() {
		t.Fatalf("%+v, %v\nwant %+v", l, err, want)
	}
	if _, err := StreamLimitsOf(ctx, ts.js, "NONE"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("missing stream: %v", err)
	}
}

// TestJetStreamSourceGapSubjectFilterWhileReading: while a source of
// subject "a" reads, a message of "a" it has not read yet is deleted from
// the stream, and so are a message of "b" and one of "a" it has read. The
// source fails with a gap (on_gap: fail), or reads every other message of
// "a" and reports exactly one gap (skip). The stream holds 10,000 messages
// of "a", far more than the source asks the server for ahead of what it
// has read, so the deleted one has not been sent when it is deleted.
func TestJetStreamSourceGapSubjectFilterWhileReading(t *testing.T) {
	const n = 20_000
	for _, onGap := range []string{GapFail, GapSkip} {
		t.Run(onGap, func(t *testing.T) {
			ts := startServer(t)
			ctx := testCtx(t)
			// m-i is at stream sequence i+1, "a" for even i.
			st := gapStream(t, ts, []string{"a", "b"}, n)
			var gaps []*GapError
			cfg := JetStreamSourceConfig{Stream: "S", Subjects: []string{"a"}, Subtask: 0, Parallelism: 1, Name: "src",
				OnGap: onGap, Gap: func(g *GapError) { gaps = append(gaps, g) }}
			src := newSource(t, ts, cfg)
			read := valuesOf(readN(t, src, 100))
			for _, seq := range []uint64{19_001, 19_002, 1} { // m-19000 (a), m-19001 (b), m-0 (a, read)
				if err := st.DeleteMsg(ctx, seq); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for i := 0; i < n; i += 2 {
				if i != 19_000 {
					want = append(want, fmt.Sprintf("m-%d", i))
				}
			}
			const why = "the stream removed 1 of the filter's messages the source had not read yet"
			if onGap == GapFail {
				rest, err := fetchErr(t, src, n)
				var gap *GapError
				if !errors.As(err, &gap) || gap.Filter != "a" || !strings.Contains(err.Error(), why) {
					t.Fatalf("after %d records: %v; want a gap: %s", len(read)+len(rest), err, why)
				}
				if got := append(read, rest...); !slices.Equal(got, want[:len(got)]) {
					t.Fatalf("read %d records before the gap, not in order", len(got))
				}
				return
			}
			read = append(read, valuesOf(readN(t, src, len(want)-len(read)))...)
			if !slices.Equal(read, want) {
				t.Fatalf("read %d records, want the 9,999 of \"a\" left in order", len(read))
			}
			var b abi.Batch
			if err := src.Fetch(ctx, &b, 10, 200*time.Millisecond); err != nil || b.Len() != 0 {
				t.Fatalf("after the end: %d records, %v", b.Len(), err)
			}
			if len(gaps) != 1 || gaps[0].Filter != "a" || !strings.Contains(gaps[0].Why, why) {
				t.Fatalf("gaps %+v, want one: %s", gaps, why)
			}
		})
	}
}
