package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/internal/wasmbuild"
)

// streamsFor creates a stream per subject (named by the subject in upper
// case).
func streamsFor(t *testing.T, js jetstream.JetStream, subjects ...string) {
	t.Helper()
	for _, s := range subjects {
		if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: strings.ToUpper(s), Subjects: []string{s}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A test stream that moves processing time drives processing-time windows
// exactly: every record before an advance is in the windows it closes,
// every record after it in the next ones, in each of the window's two
// subtasks, which read both subtasks of the source (one of which ends at
// once).
//
// With time: ingestion the source stamps each record with the scripted
// clock and its watermarks follow it, so event-time windows give the same
// results.
func TestTestStreamProcessingTimeWindows(t *testing.T) {
	for _, mode := range []string{"processing", "ingestion"} {
		t.Run(mode, func(t *testing.T) { testScriptedWindows(t, mode) })
	}
}

func testScriptedWindows(t *testing.T, mode string) {
	m, js := newJetStreamManager(t)
	streamsFor(t, js, "counts")
	runJob(t, m, `
name: scripted-clock
time: `+mode+`
parallelism: 2
sources:
  - id: script
    test_stream:
      steps:
        - record: {value: '{"user":"a"}'}
        - record: {value: '{"user":"b"}'}
        - record: {value: '{"user":"a"}'}
        - advance_processing_time: 10s
        - record: {value: '{"user":"b"}'}
        - advance_processing_time: 4999ms
        - record: {value: '{"user":"a"}'}
        - advance_processing_time: 1ms
        - record: {value: '{"user":"a"}'}
        - advance_processing_time: 5s
        - record: {value: '{"user":"a"}'}
operators:
  - id: per_user
    input: script
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: count}
sinks:
  - {id: out, input: per_user, jetstream: {subject: counts}}
`)
	var got []string
	for _, msg := range streamMessages(t, js, "COUNTS") {
		got = append(got, fmt.Sprintf("%s @%s", msg.Data, msg.Header.Get("Platform-Timestamp")))
	}
	slices.Sort(got)
	// The last window is fired by the end of the input.
	want := []string{
		`{"key":"a","window_start":0,"window_end":10000,"value":2} @9999`,
		`{"key":"a","window_start":10000,"window_end":20000,"value":2} @19999`,
		`{"key":"a","window_start":20000,"window_end":30000,"value":1} @29999`,
		`{"key":"b","window_start":0,"window_end":10000,"value":1} @9999`,
		`{"key":"b","window_start":10000,"window_end":20000,"value":1} @19999`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("counts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A keyed process function's processing-time timers (udfs/idle: a timer a
// second after each record of a key) fire when the script moves the clock
// to them, not a millisecond before; the frames carry the scripted time.
func TestTestStreamProcessingTimeTimers(t *testing.T) {
	m, js := newJetStreamManager(t)
	streamsFor(t, js, "idle")
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "idle"))
	if err != nil {
		t.Fatal(err)
	}
	runJob(t, m, fmt.Sprintf(`
name: scripted-timers
sources:
  - id: script
    parallelism: 1
    test_stream:
      steps:
        - advance_processing_time: 100ms
        - record: {value: '{"user":"a","v":1}', timestamp: 1}
        - advance_processing_time: 500ms
        - record: {value: '{"user":"b","v":2}', timestamp: 2}
        - record: {value: '{"user":"a","v":3}', timestamp: 3}
        - advance_processing_time: 999ms
        - record: {value: '{"user":"c","v":4}', timestamp: 4}
        - advance_processing_time: 1ms
        - advance_processing_time: 5s
        - record: {value: '{"user":"a","v":5}', timestamp: 5}
operators:
  - id: watch
    parallelism: 2
    input: script
    key_by: {field: user}
    process: {module: %s, function: watch}
    on_timer: report
sinks:
  - {id: out, input: watch, jetstream: {subject: idle}}
`, mod.ID))
	var got []string
	for _, msg := range streamMessages(t, js, "IDLE") {
		got = append(got, fmt.Sprintf("%s %s @%s", msg.Header.Get("Platform-Key"), msg.Data, msg.Header.Get("Platform-Timestamp")))
	}
	slices.Sort(got)
	// a's timer moved from 1100 to 1600 with its second record; c's, set
	// at 1599, fires at 2599, within the 5s advance; a's last record's
	// timer (at 7600) is still pending at the end of the input, which does
	// not fire processing-time timers.
	want := []string{
		`a idle {"user":"a","v":3} @1600`,
		`b idle {"user":"b","v":2} @1600`,
		`c idle {"user":"c","v":4} @2599`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outputs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A job on a scripted clock that stops with a savepoint part of the way
// through its script and resumes from it gives exactly the windows and
// timers of an uninterrupted run: the clock is not in the savepoint, the
// source recomputes it from the steps it played and sends it before any
// record (else the resumed process function would set its timers from 0),
// and the windows' contents and the timers wait in the savepoint for it.
func TestTestStreamProcessingTimeRestore(t *testing.T) {
	m, js := newJetStreamManager(t)
	streamsFor(t, js, "raw", "counts", "quiet")
	mod, err := m.UploadModule(context.Background(), wasmbuild.UDF(t, "idle"))
	if err != nil {
		t.Fatal(err)
	}
	const windows, perWindow = 4, 30
	var steps strings.Builder
	for w := range windows {
		for r := range perWindow {
			fmt.Fprintf(&steps, "        - record: {value: '{\"user\":\"u%d\",\"n\":%d}'}\n", r%2, w*perWindow+r)
		}
		steps.WriteString("        - advance_processing_time: 10s\n")
	}
	// The raw sink, chained to the source and throttled, holds the script
	// back, so that the savepoint comes in the middle of it; batches of 4
	// let it come in the middle of a window too.
	spec := []byte(`
name: scripted-restore
time: processing
udf: {batch_size: 4}
checkpoint: {interval: 1h, mode: exactly_once}
sources:
  - id: script
    parallelism: 1
    test_stream:
      steps:
` + steps.String() + `operators:
  - id: per_user
    parallelism: 2
    input: script
    key_by: {field: user}
    window: {type: tumbling, size: 10s}
    aggregate: {builtin: count}
  - id: watch
    parallelism: 2
    input: script
    key_by: {field: user}
    process: {module: ` + mod.ID + `, function: watch}
    on_timer: report
sinks:
  - {id: raw, input: script, parallelism: 1, throttle: 20, jetstream: {subject: raw}}
  - {id: out, input: per_user, jetstream: {subject: counts}}
  - {id: quiet, input: watch, jetstream: {subject: quiet}}
`)
	ctx := context.Background()
	first, err := m.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// The exactly-once sinks publish at checkpoints: the raw sink's
	// counter tells that the script is in its second window, whose clock
	// the resumed source must send on.
	waitFor(t, "the first records", func() bool {
		info, err := m.GetJob(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		return running(t, m, first.ID) && vertexInfo(info, "raw").RecordsIn >= perWindow+perWindow/2
	})
	sp := waitSavepoint(t, m, first.ID, true)
	if _, err := m.WaitJob(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(streamValues(t, js, "RAW")); n <= perWindow || n >= windows*perWindow {
		t.Fatalf("the savepoint came after %d records, want it after the first window and before the end", n)
	}
	second, err := m.SubmitJobFromSavepoint(ctx, spec, sp, false)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if info, err := m.WaitJob(wctx, second.ID); err != nil || info.State != StateFinished {
		t.Fatalf("resumed job %s %s, %v", info.State, info.Failure, err)
	}
	raw := streamValues(t, js, "RAW")
	if len(raw) != windows*perWindow {
		t.Fatalf("%d raw records, want %d", len(raw), windows*perWindow)
	}
	for i, v := range raw {
		if want := fmt.Sprintf(`{"user":"u%d","n":%d}`, i%perWindow%2, i); v != want {
			t.Fatalf("raw record %d: %s, want %s", i, v, want)
		}
	}
	got := streamValues(t, js, "COUNTS")
	slices.Sort(got)
	var want []string
	for w := range windows {
		for u := range 2 {
			want = append(want, fmt.Sprintf(`{"key":"u%d","window_start":%d,"window_end":%d,"value":%d}`, u, w*10000, (w+1)*10000, perWindow/2))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("counts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each user's processing-time timer, a second after its last record of
	// a window, fires at the advance that ends the window.
	var quiet []string
	for _, msg := range streamMessages(t, js, "QUIET") {
		quiet = append(quiet, fmt.Sprintf("%s @%s", msg.Data, msg.Header.Get("Platform-Timestamp")))
	}
	slices.Sort(quiet)
	want = nil
	for w := range windows {
		for u := range 2 {
			want = append(want, fmt.Sprintf(`idle {"user":"u%d","n":%d} @%d`, u, w*perWindow+perWindow-2+u, w*10000+1000))
		}
	}
	slices.Sort(want)
	if !slices.Equal(quiet, want) {
		t.Fatalf("timers\n%s\nwant\n%s", strings.Join(quiet, "\n"), strings.Join(want, "\n"))
	}
}
