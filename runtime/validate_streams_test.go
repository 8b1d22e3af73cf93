package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestSourceRetentionRefused: a source on a stream with interest or
// work-queue retention is refused at submission (a 400 in the API: an
// invalid job), saying why and what to use.
func TestSourceRetentionRefused(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "INTEREST", Subjects: []string{"interest"}, Retention: jetstream.InterestPolicy},
		{Name: "WORK", Subjects: []string{"work"}, Retention: jetstream.WorkQueuePolicy},
		{Name: "OUT", Subjects: []string{"out"}},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ stream, want string }{
		{"INTEREST", `stream "INTEREST" has interest retention, which removes messages once every consumer interested in them has acknowledged them, ` +
			`or at once when none is, so a restart could not read them again: read from a stream with limits retention (JetStream's default) instead`},
		{"WORK", `stream "WORK" has work-queue retention, which removes messages once a consumer acknowledges them, ` +
			`so a restart could not read them again: read from a stream with limits retention (JetStream's default) instead`},
	} {
		spec := "name: r\nsources: [{id: in, jetstream: {stream: " + c.stream + "}}]\nsinks: [{id: out, input: in, jetstream: {subject: out}}]\n"
		_, err := m.SubmitJob(ctx, []byte(spec))
		var jobErr *JobError
		if !errors.Is(err, ErrInvalidJob) || !errors.As(err, &jobErr) || err.Error() != "invalid job: sources[0].jetstream.stream: "+c.want {
			t.Fatalf("%s: %v", c.stream, err)
		}
		if len(jobErr.Problems) != 1 || jobErr.Problems[0].Path != "sources[0].jetstream.stream" || jobErr.Problems[0].Message != c.want || jobErr.Problems[0].Line != 2 {
			t.Fatalf("%s: problems %+v", c.stream, jobErr.Problems)
		}
		if _, err := m.ValidateJob(ctx, []byte(spec), "", false); err == nil || err.Error() != "invalid job: sources[0].jetstream.stream: "+c.want {
			t.Fatalf("%s: dry run: %v", c.stream, err)
		}
	}
}

// TestSinkStreamDropWarnings: sink and dead-letter streams that can drop
// what the job writes are accepted with a warning each.
func TestSinkStreamDropWarnings(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []jetstream.StreamConfig{
		{Name: "IN", Subjects: []string{"in"}},
		{Name: "FULL", Subjects: []string{"full"}, MaxMsgs: 100, Discard: jetstream.DiscardNew},
		{Name: "OLDEST", Subjects: []string{"oldest"}, MaxBytes: 1 << 20, MaxMsgsPerSubject: 10},
		{Name: "SHORT", Subjects: []string{"short"}, MaxAge: 30 * time.Second},
		{Name: "LONG", Subjects: []string{"long"}, MaxAge: time.Hour},
		{Name: "DLQ", Subjects: []string{"dlq"}, MaxMsgs: 5},
	} {
		if _, err := js.CreateStream(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	spec := `
name: w
restart: {strategy: fixed_delay, delay: 5s}
on_udf_error: dead_letter
dead_letter_subject: dlq
sources: [{id: in, jetstream: {stream: IN}}]
sinks:
  - {id: full, input: in, jetstream: {subject: full}}
  - {id: oldest, input: in, jetstream: {subject: oldest}}
  - {id: short, input: in, jetstream: {subject: short}}
  - {id: long, input: in, jetstream: {subject: long}}
`
	want := []string{
		"sinks[0]: stream FULL can drop what the job writes: it refuses new messages once full (discard new at max_msgs 100), " +
			"which fails the writes and restarts the job until there is room; raise or remove these limits so that nothing is dropped",
		"sinks[1]: stream OLDEST can drop what the job writes: it removes its oldest messages beyond max_bytes 1048576, max_msgs_per_subject 10; " +
			"raise or remove these limits so that nothing is dropped",
		"sinks[2]: stream SHORT can drop what the job writes: it removes messages after max_age 30s, less than a recovery may take " +
			"(restart delay up to 5s plus a minute to restore); raise or remove these limits so that nothing is dropped",
		"dead_letter_subject: stream DLQ can drop what the job writes: it removes its oldest messages beyond max_msgs 5; " +
			"raise or remove these limits so that nothing is dropped",
	}
	plan, err := m.ValidateJob(ctx, []byte(spec), "", false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Warnings, want) {
		t.Fatalf("dry run warnings:\n%q\nwant\n%q", plan.Warnings, want)
	}
	info, err := m.SubmitJob(ctx, []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Warnings, want) {
		t.Fatalf("submission warnings:\n%q\nwant\n%q", info.Warnings, want)
	}
}

// TestSubmitFromCorruptSavepoint: a savepoint whose metadata is corrupt is
// refused with what is wrong with it, not as a savepoint that does not
// exist.
func TestSubmitFromCorruptSavepoint(t *testing.T) {
	m, js := newJetStreamManager(t)
	ctx := context.Background()
	for _, s := range []string{"in", "out"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: strings.ToUpper(s), Subjects: []string{s}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(m.cfg.DataDir, "checkpoints", "old", "5")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := "name: r\ncheckpoint: {interval: 1s}\nsources: [{id: in, jetstream: {stream: IN}}]\nsinks: [{id: out, input: in, jetstream: {subject: out}}]\n"
	_, err := m.SubmitJobFromSavepoint(ctx, []byte(spec), "old-5", false)
	want := "invalid job: from_savepoint: old-5: checkpoint store: job old checkpoint 5 metadata: corrupt: 1 bytes that do not decode: unexpected end of JSON input"
	if !errors.Is(err, ErrInvalidJob) || err.Error() != want {
		t.Fatalf("%v, want %s", err, want)
	}
}
