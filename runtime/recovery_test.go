package runtime

import (
	"context"
	"encoding/json"
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

// TestRestoreFallbackSurvivesSecondFailure: after a fallback past corrupt
// checkpoints whose epochs committed 10,000 records, the platform stops
// again while the replay is under way, once a newer checkpoint completed.
// That checkpoint holds the committed records the replay had not produced
// again yet, the sink restored from it goes on dropping them, and the
// output stays each record once, in order.
func TestRestoreFallbackSurvivesSecondFailure(t *testing.T) {
	const committed = 10_000
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 100)
	// The throttle makes the replay last seconds, over many checkpoints.
	spec := strings.Replace(passThroughJob, "mode: exactly_once}", "mode: exactly_once, retain: 1000}", 1)
	spec = strings.Replace(spec, "jetstream: {subject: out}}", "jetstream: {subject: out}, throttle: 2000}", 1)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, spec, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.checkpointed(id, 100)
	before := len(p.checkpointDirs(id))
	p.publish("in", 100, 100+committed)
	p.checkpointed(id, 100+committed)
	p.stop()
	dirs := p.checkpointDirs(id)
	for _, dir := range dirs[before:] {
		truncate(t, filepath.Join(dir, "_metadata"))
	}
	newestCorrupt, _ := strconv.Atoi(filepath.Base(dirs[len(dirs)-1]))
	p.start()
	waitFor(t, "a checkpoint after the fallback", func() bool {
		all := p.checkpointDirs(id)
		n, _ := strconv.Atoi(filepath.Base(all[len(all)-1]))
		return n > newestCorrupt
	})
	p.stop()
	p.start()
	t.Cleanup(func() {
		if t.Failed() {
			info := p.info(id)
			t.Logf("state %s %s %+v", info.State, info.Failure, info.Checkpoint)
			for _, l := range p.log.lines() {
				if !strings.Contains(l, "checkpoint completed") {
					t.Log(l)
				}
			}
		}
	})
	left := ""
	waitFor(t, "the job to run again", func() bool {
		for _, l := range p.log.lines() {
			if strings.Contains(l, `msg="sink goes on dropping committed output from the replay"`) {
				left = l
			}
		}
		info := p.info(id)
		if info.State == StateFailed {
			t.Fatalf("job failed: %s\n%s", info.Failure, strings.Join(p.log.lines(), "\n"))
		}
		return info.Checkpoint != nil && info.Checkpoint.Restored != nil
	})
	if left == "" {
		t.Fatalf("the replay had ended before the second stop, so nothing was left to drop: the test checks nothing; log:\n%s",
			strings.Join(p.log.lines(), "\n"))
	}
	p.publish("in", 100+committed, 150+committed)
	p.checkpointed(id, 150+committed)
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, values(0, 150+committed)) {
		t.Fatalf("output %d records, want v0 to v%d once each in order", len(got), 149+committed)
	}
	t.Log(left)
}

// TestRestoreFallbackToSavepointDropsCommittedOutput: a job submitted from
// another job's savepoint commits 50 records; all its checkpoints are
// corrupt when the platform starts again, so it restores the savepoint,
// and its exactly-once sink drops the 50 from the replay: the output stays
// each record once, in order.
func TestRestoreFallbackToSavepointDropsCommittedOutput(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	p.stream("OUT", "out")
	p.publish("in", 0, 100)
	ctx := context.Background()
	first, err := p.m.SubmitJob(ctx, fmt.Appendf(nil, passThroughJob, ""))
	if err != nil {
		t.Fatal(err)
	}
	p.checkpointed(first.ID, 100)
	sp := waitSavepoint(t, p.m, first.ID, true)
	p.wait(first.ID)
	info, err := p.m.SubmitJobFromSavepoint(ctx, fmt.Appendf(nil, passThroughJob, ""), sp, false)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	p.publish("in", 100, 150)
	p.checkpointed(id, 150)
	p.stop()
	for _, dir := range p.checkpointDirs(id) {
		truncate(t, filepath.Join(dir, "_metadata"))
	}
	p.start()
	waitFor(t, "the job to run again", func() bool {
		info := p.info(id)
		return info.Checkpoint != nil && info.Checkpoint.Restored != nil
	})
	p.publish("in", 150, 200)
	p.checkpointed(id, 200)
	if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, values(0, 200)) {
		t.Fatalf("output %d records, want v0 to v199 once each in order: %v", len(got), got)
	}
	want := fmt.Sprintf(`msg="sink drops committed output from the replay" job=%s job_name=pass vertex=out subtask=0 after_checkpoint=0 records=50`, id)
	if log := strings.Join(p.log.lines(), "\n"); !strings.Contains(log, want) {
		t.Fatalf("log has no %s:\n%s", want, log)
	}
}

// filterGapJob reads subject in.a of IN, throttled so that it reads for
// seconds.
const filterGapJob = `
name: gap
checkpoint: {interval: 50ms, mode: exactly_once}
restart: {strategy: none}
sources: [{id: in, jetstream: {stream: IN, subjects: [in.a]%s}}]
sinks: [{id: out, input: in, jetstream: {subject: out}, throttle: 2000}]
`

// TestSourceGapWhileReadingSubjectFilter: while a job reads subject in.a
// of a stream of 10,000 messages of in.a and as many of in.b, the last
// message of in.a is deleted. The job fails naming the gap (on_gap: fail,
// the default), or stores every other message of in.a once, in order, and
// counts one gap (skip).
func TestSourceGapWhileReadingSubjectFilter(t *testing.T) {
	const n = 10_000
	for _, mode := range []struct{ name, onGap string }{{"fail", ""}, {"skip", ", on_gap: skip"}} {
		onGap := mode.onGap
		t.Run(mode.name, func(t *testing.T) {
			p := newRecoveryPlatform(t)
			p.stream("IN", "in.a", "in.b")
			p.stream("OUT", "out")
			ctx := context.Background()
			for i := range n {
				for _, subject := range []string{"in.a", "in.b"} {
					if _, err := p.js.Publish(ctx, subject, fmt.Appendf(nil, "v%d", i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			info, err := p.m.SubmitJob(ctx, fmt.Appendf(nil, filterGapJob, onGap))
			if err != nil {
				t.Fatal(err)
			}
			id := info.ID
			waitFor(t, "the job to store records", func() bool { return len(streamValues(t, p.js, "OUT")) >= 100 })
			st, err := p.js.Stream(ctx, "IN")
			if err != nil {
				t.Fatal(err)
			}
			// v9999 of in.a is at sequence 19,999.
			if err := st.DeleteMsg(ctx, 2*n-1); err != nil {
				t.Fatal(err)
			}
			const why = "the stream removed 1 of the filter's messages the source had not read yet"
			if onGap == "" {
				info := p.wait(id)
				if info.State != StateFailed || !strings.Contains(info.Failure, `connector: source in: stream "IN" filter "in.a": sequence gap after position`) ||
					!strings.Contains(info.Failure, why) {
					t.Fatalf("job %s: %s\nwant FAILED with a gap: %s", info.State, info.Failure, why)
				}
				return
			}
			want := values(0, n-1)
			waitFor(t, "the records of in.a", func() bool { return len(streamValues(t, p.js, "OUT")) >= len(want) })
			p.checkpointed(id, len(want))
			if got := streamValues(t, p.js, "OUT"); !slices.Equal(got, want) {
				t.Fatalf("output %d records, want v0 to v%d once each in order", len(got), n-2)
			}
			gaps, ok := lookup(gather(t, p.m)["platform_source_gaps_total"], "job_id="+id+",job_name=gap,subtask=0,vertex=in")
			if !ok || gaps != 1 {
				t.Fatalf("platform_source_gaps_total %v (%v), want 1", gaps, ok)
			}
		})
	}
}

// TestRestoreFallbackObjectSinkDropsCommittedOutput: the objects an
// exactly-once object store sink wrote for checkpoints that are corrupt
// when the platform starts again stay; the replay from the older checkpoint
// names its objects anew, and the sink drops the records those objects hold
// from it: the bucket holds each record once.
func TestRestoreFallbackObjectSinkDropsCommittedOutput(t *testing.T) {
	p := newRecoveryPlatform(t)
	p.stream("IN", "in")
	if _, err := p.js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: "FILES"}); err != nil {
		t.Fatal(err)
	}
	p.publish("in", 0, 100)
	spec := strings.Replace(passThroughJob, "mode: exactly_once}", "mode: exactly_once, retain: 1000}", 1)
	spec = strings.Replace(spec, "jetstream: {subject: out}}", "object_store: {bucket: FILES, prefix: out}}", 1)
	info, err := p.m.SubmitJob(context.Background(), fmt.Appendf(nil, spec, ""))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	stored := func() []string {
		lines, _, _ := objectLines(t, p.js, "FILES")
		var out []string
		for _, l := range lines {
			var rec struct{ Value string }
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			out = append(out, rec.Value)
		}
		slices.SortFunc(out, func(a, b string) int {
			x, _ := strconv.Atoi(a[1:])
			y, _ := strconv.Atoi(b[1:])
			return x - y
		})
		return out
	}
	written := func(n int) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%d records in objects", n), func() bool { return len(stored()) >= n })
		at := p.info(id).Checkpoint.Completed
		waitFor(t, "two more checkpoints", func() bool { return p.info(id).Checkpoint.Completed >= at+2 })
	}
	written(100)
	before := len(p.checkpointDirs(id))
	p.publish("in", 100, 150)
	written(150)
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
	p.publish("in", 150, 200)
	written(200)
	if got := stored(); !slices.Equal(got, values(0, 200)) {
		t.Fatalf("objects hold %d records, want v0 to v199 once each: %v", len(got), got)
	}
	want := fmt.Sprintf(`msg="sink drops committed output from the replay" job=%s job_name=pass vertex=out subtask=0 after_checkpoint=%s records=50`, id, filepath.Base(dirs[before-1]))
	if log := strings.Join(p.log.lines(), "\n"); !strings.Contains(log, want) {
		t.Fatalf("log has no %s:\n%s", want, log)
	}
}
