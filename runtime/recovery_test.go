package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// recoveryPlatform is a manager on an embedded NATS server that a test can
// stop and start again on the same data directory, as a restarted process
// would, with its log kept.
type recoveryPlatform struct {
	t   *testing.T
	dir string
	js  jetstream.JetStream
	m   *Manager
	log *syncBuffer
}

func newRecoveryPlatform(t *testing.T) *recoveryPlatform {
	t.Helper()
	js := newTestJetStream(t)
	p := &recoveryPlatform{t: t, dir: t.TempDir(), js: js}
	p.start()
	return p
}

// start makes the manager, which resumes the jobs the registry has.
func (p *recoveryPlatform) start() {
	p.t.Helper()
	p.log = &syncBuffer{}
	m, err := NewManager(context.Background(), Config{
		DataDir: p.dir, Host: newTestHost(p.t), JetStream: p.js, Logger: slog.New(slog.NewTextHandler(p.log, nil)),
	})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { _ = m.Close(context.Background()) })
	p.m = m
}

// stop closes the manager: its jobs are suspended, not cancelled.
func (p *recoveryPlatform) stop() {
	p.t.Helper()
	if err := p.m.Close(context.Background()); err != nil {
		p.t.Fatal(err)
	}
}

func (p *recoveryPlatform) stream(name string, subjects ...string) {
	p.t.Helper()
	if _, err := p.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: subjects, Storage: jetstream.FileStorage}); err != nil {
		p.t.Fatal(err)
	}
}

// publish sends values v<from> to v<to-1> to subject.
func (p *recoveryPlatform) publish(subject string, from, to int) {
	p.t.Helper()
	for i := from; i < to; i++ {
		if _, err := p.js.Publish(context.Background(), subject, fmt.Appendf(nil, "v%d", i)); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *recoveryPlatform) info(id string) JobInfo {
	p.t.Helper()
	info, err := p.m.GetJob(context.Background(), id)
	if err != nil {
		p.t.Fatal(err)
	}
	return info
}

// checkpointed waits until the job's output has n records and two more
// checkpoints completed after that, so that its newest two checkpoints
// both hold every position of its input.
func (p *recoveryPlatform) checkpointed(id string, n int) {
	p.t.Helper()
	var at int64
	waitFor(p.t, fmt.Sprintf("%d records out", n), func() bool {
		info := p.info(id)
		if info.State != StateRunning && info.State != StateCreated {
			p.t.Fatalf("job %s: %s", info.State, info.Failure)
		}
		if len(streamValues(p.t, p.js, "OUT")) < n || info.Checkpoint == nil {
			return false
		}
		at = info.Checkpoint.Completed
		return true
	})
	waitFor(p.t, "two more checkpoints", func() bool { return p.info(id).Checkpoint.Completed >= at+2 })
}

// checkpointDirs are the directories of the job's completed checkpoints,
// oldest first.
func (p *recoveryPlatform) checkpointDirs(id string) []string {
	p.t.Helper()
	entries, err := os.ReadDir(filepath.Join(p.dir, "checkpoints", id))
	if err != nil {
		p.t.Fatal(err)
	}
	var ids []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(p.dir, "checkpoints", id, e.Name(), "_metadata")); err == nil {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	var out []string
	for _, n := range ids {
		out = append(out, filepath.Join(p.dir, "checkpoints", id, strconv.Itoa(n)))
	}
	return out
}

func (p *recoveryPlatform) wait(id string) JobInfo {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info, err := p.m.WaitJob(ctx, id)
	if err != nil {
		p.t.Fatalf("job %s: %v", id, err)
	}
	return info
}

func values(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return out
}

const passThroughJob = `
name: pass
checkpoint: {interval: 50ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 10ms}
sources: [{id: in, jetstream: {stream: IN%s}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`

func truncate(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return len(data) / 2
}

// TestRestoreFallsBackFromTruncatedMetadata: the newest checkpoint's
// _metadata is cut in half while the platform is down; the job resumes from
// the checkpoint before it, says why in a warning, and its output stays
// exactly once.
func TestRestoreFallsBackFromTruncatedMetadata(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 100)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, passThroughJob, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.checkpointed(id, 100)
	p.stop()
	dirs := p.checkpointDirs(id)
	newest, previous := filepath.Base(dirs[len(dirs)-1]), filepath.Base(dirs[len(dirs)-2])
	n := truncate(t, filepath.Join(dirs[len(dirs)-1], "_metadata"))
	p.start()
	waitFor(t, "the job to run again", func() bool {
		info := p.info(id)
		return info.Checkpoint != nil && info.Checkpoint.Restored != nil
	})
	info = p.info(id)
	if got := strconv.FormatInt(info.Checkpoint.Restored.Checkpoint, 10); got != previous || info.Restarts != 0 {
		t.Fatalf("restored checkpoint %s after %d restarts, want %s (the one before %s) and none", got, info.Restarts, previous, newest)
	}
	want := fmt.Sprintf(`msg="checkpoint not usable, trying an older one" job=%s checkpoint=%s from_job=%s reason="checkpoint store: job %s checkpoint %s metadata: corrupt: %d bytes that do not decode: unexpected end of JSON input"`,
		id, newest, id, id, newest, n)
	if log := strings.Join(p.log.lines(), "\n"); !strings.Contains(log, want) {
		t.Fatalf("log has no %s:\n%s", want, log)
	}
	p.publish("in", 100, 150)
	waitFor(t, "150 records out", func() bool { return len(streamValues(t, p.js, "OUT")) >= 150 })
	// Another checkpoint interval for anything duplicated to show.
	time.Sleep(200 * time.Millisecond)
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, values(0, 150)) {
		t.Fatalf("output %d records, want v0 to v149 once each in order: %v", len(got), got)
	}
	if info := p.info(id); info.State != StateRunning {
		t.Fatalf("job %s: %s", info.State, info.Failure)
	}
}

// TestRestoreFailsWhenNoCheckpointIsUsable: every checkpoint is corrupt
// (the newest's _metadata truncated, the others' source positions gone or
// changed); the job fails at once, without a restart, saying why for each.
func TestRestoreFailsWhenNoCheckpointIsUsable(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 10)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, passThroughJob, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.checkpointed(id, 10)
	p.stop()
	// Newest first: the newest's metadata cut in half, then by turns a
	// positions blob removed or replaced by one of another size.
	dirs := p.checkpointDirs(id)
	slices.Reverse(dirs)
	prefix := fmt.Sprintf("checkpoint store: job %s checkpoint ", id)
	var reasons []string
	for i, d := range dirs {
		cp, blob := filepath.Base(d), filepath.Join(d, "positions~in~0")
		switch {
		case i == 0:
			n := truncate(t, filepath.Join(d, "_metadata"))
			reasons = append(reasons, fmt.Sprintf("%s%s metadata: corrupt: %d bytes that do not decode: unexpected end of JSON input", prefix, cp, n))
		case i%2 == 1:
			if err := os.Remove(blob); err != nil {
				t.Fatal(err)
			}
			reasons = append(reasons, prefix+cp+" blob positions~in~0: corrupt: missing")
		default:
			data, err := os.ReadFile(blob)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(blob, []byte(`{">":1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			reasons = append(reasons, fmt.Sprintf("%s%s blob positions~in~0: corrupt: 7 bytes, the metadata recorded %d", prefix, cp, len(data)))
		}
	}
	p.start()
	info = p.wait(id)
	want := fmt.Sprintf("job %s: restore checkpoint %s: no checkpoint is usable: %s", id, filepath.Base(dirs[0]), strings.Join(reasons, "; "))
	if info.State != StateFailed || info.Failure != want || info.Restarts != 0 || len(dirs) < 3 {
		t.Fatalf("job %s after %d restarts: %s\nwant FAILED after none: %s", info.State, info.Restarts, info.Failure, want)
	}
}

// TestRestoreFailsOnStreamRecreatedShorter: while the platform is down the
// source stream is deleted and recreated with fewer messages than the
// checkpoint read; the job fails naming the source, its filter and both
// positions, without a restart.
func TestRestoreFailsOnStreamRecreatedShorter(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 20)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, passThroughJob, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.checkpointed(id, 20)
	p.stop()
	dirs := p.checkpointDirs(id)
	newest := filepath.Base(dirs[len(dirs)-1])
	if err := p.js.DeleteStream(context.Background(), "IN"); err != nil {
		t.Fatal(err)
	}
	p.stream("IN", "in")
	p.publish("in", 0, 5)
	p.start()
	info = p.wait(id)
	want := fmt.Sprintf(`task in[0]: job %s: restore checkpoint %s: checkpointed position beyond the stream's end: `+
		`source in filter ">" was at stream sequence 20, but stream "IN" ends at 5 (was it deleted, recreated or purged?)`, id, newest)
	if info.State != StateFailed || info.Restarts != 0 || info.Failure != want {
		t.Fatalf("job %s after %d restarts: %s\nwant FAILED after none: %s", info.State, info.Restarts, info.Failure, want)
	}
}

// gapJob is passThroughJob with a restart strategy that gives up.
const gapJob = `
name: gap
checkpoint: {interval: 50ms, mode: exactly_once}
restart: {strategy: fixed_delay, delay: 10ms, max_attempts: 2}
sources: [{id: in, jetstream: {stream: IN%s}}]
sinks: [{id: out, input: in, jetstream: {subject: out}}]
`

// gapAfterRestore runs a job over v0 to v9, and while the platform is down
// publishes v10 to v19 (stream sequences 11 to 20) and deletes sequences
// 11 and 12 before the job could read them.
func gapAfterRestore(t *testing.T, onGap string) (*recoveryPlatform, string) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 10)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, gapJob, onGap))
	if err != nil {
		t.Fatal(err)
	}
	p.checkpointed(info.ID, 10)
	p.stop()
	p.publish("in", 10, 20)
	st, err := p.js.Stream(context.Background(), "IN")
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{11, 12} {
		if err := st.DeleteMsg(context.Background(), seq); err != nil {
			t.Fatal(err)
		}
	}
	p.start()
	return p, info.ID
}

// TestSourceGapFailsJob: messages after the checkpointed position were
// deleted from the stream; the source fails naming itself, its filter and
// both positions, and the restart strategy counts the failures.
func TestSourceGapFailsJob(t *testing.T) {
	p, id := gapAfterRestore(t, "")
	info := p.wait(id)
	want := `connector: source in: stream "IN" filter ">": sequence gap after position 10: expected stream sequence 11, found stream sequence 13 ` +
		`(2 sequences of the stream were removed before the source read them); set the source's on_gap: skip to go on past gaps (after 2 restarts)`
	if info.State != StateFailed || info.Restarts != 2 || !strings.HasSuffix(info.Failure, want) {
		t.Fatalf("job %s after %d restarts: %s\nwant FAILED after 2: ...%s", info.State, info.Restarts, info.Failure, want)
	}
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, values(0, 10)) {
		t.Fatalf("output %v, want v0 to v9", got)
	}
}

// TestSourceGapSkipped: with on_gap: skip the job goes on after the gap,
// counts it in platform_source_gaps_total and logs it.
func TestSourceGapSkipped(t *testing.T) {
	p, id := gapAfterRestore(t, ", on_gap: skip")
	want := append(values(0, 10), values(12, 20)...)
	waitFor(t, "the records after the gap", func() bool { return len(streamValues(t, p.js, "OUT")) >= len(want) })
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	info := p.info(id)
	if info.State != StateRunning || info.Restarts != 0 {
		t.Fatalf("job %s after %d restarts: %s", info.State, info.Restarts, info.Failure)
	}
	gaps, ok := lookup(gather(t, p.m)["platform_source_gaps_total"], "job_id="+id+",job_name=gap,subtask=0,vertex=in")
	if !ok || gaps != 1 {
		t.Fatalf("platform_source_gaps_total %v (%v), want 1", gaps, ok)
	}
	line := `level=WARN msg="source sequence gap skipped" job=` + id
	wantTail := ` vertex=in subtask=0 stream=IN filter=> after=10 found=13 reason="2 sequences of the stream were removed before the source read them"`
	found := false
	for _, l := range p.log.lines() {
		if strings.Contains(l, line) && strings.HasSuffix(l, wantTail) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no log line %s...%s in:\n%s", line, wantTail, strings.Join(p.log.lines(), "\n"))
	}
}

// TestRestoreFallbackDropsCommittedOutput: records committed in the epochs
// of checkpoints that are corrupt when the platform starts again come again
// when the job replays its input from the older checkpoint it falls back
// to; the exactly-once sink drops them, and the output stays each record
// once, in order.
func TestRestoreFallbackDropsCommittedOutput(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 100)
	spec := strings.Replace(passThroughJob, "mode: exactly_once}", "mode: exactly_once, retain: 1000}", 1)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, spec, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.checkpointed(id, 100)
	// Every checkpoint from here on holds positions past the first 100
	// records, whose output the next ones commit.
	before := len(p.checkpointDirs(id))
	p.publish("in", 100, 150)
	p.checkpointed(id, 150)
	p.stop()
	dirs := p.checkpointDirs(id)
	for _, dir := range dirs[before:] {
		truncate(t, filepath.Join(dir, "_metadata"))
	}
	p.start()
	waitFor(t, "the job to run again", func() bool {
		info := p.info(id)
		return info.Checkpoint != nil && info.Checkpoint.Restored != nil
	})
	if got, want := p.info(id).Checkpoint.Restored.Checkpoint, filepath.Base(dirs[before-1]); strconv.FormatInt(got, 10) != want {
		t.Fatalf("restored checkpoint %d, want %s, the newest before the last 50 records", got, want)
	}
	p.publish("in", 150, 200)
	waitFor(t, "200 records out", func() bool { return len(streamValues(t, p.js, "OUT")) >= 200 })
	p.checkpointed(id, 200)
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, values(0, 200)) {
		t.Fatalf("output %d records, want v0 to v199 once each in order: %v", len(got), got)
	}
	want := fmt.Sprintf(`msg="sink drops committed output from the replay" job=%s job_name=pass vertex=out subtask=0 after_checkpoint=%s records=50`, id, filepath.Base(dirs[before-1]))
	if log := strings.Join(p.log.lines(), "\n"); !strings.Contains(log, want) {
		t.Fatalf("log has no %s:\n%s", want, log)
	}
}
