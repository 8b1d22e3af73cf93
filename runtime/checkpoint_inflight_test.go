package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/runtime/exec"
)

// TestUnalignedCheckpointUnderBackpressure is the unaligned twin of
// TestAlignedCheckpointUnderBackpressure: with every channel full, the
// barriers overtake the queued buffers, so a checkpoint completes without
// aligning, and what they overtook is stored as its in-flight data.
func TestUnalignedCheckpointUnderBackpressure(t *testing.T) {
	latest := checkpointUnderBackpressure(t, ", unaligned: true", func(s *checkpoint.Stats) bool { return s.InFlight > 0 })
	if latest.Alignment != 0 || latest.InFlight > latest.Size {
		t.Fatalf("unaligned checkpoint %+v: want no alignment and in-flight bytes within its size", latest)
	}
}

// TestUnalignedRejectedAtLeastOnce: unaligned checkpoints exist for
// exactly_once only, and the error names the field.
func TestUnalignedRejectedAtLeastOnce(t *testing.T) {
	m := newTestManager(t)
	_, err := m.SubmitJob(context.Background(), []byte(`
name: alo
checkpoint: {interval: 1s, mode: at_least_once, unaligned: true}
sources: [{id: gen, generator: {kind: sequence}}]
sinks: [{id: out, input: gen, discard: true}]
`))
	if !errors.Is(err, ErrInvalidJob) || !strings.Contains(err.Error(), "checkpoint.unaligned with mode at_least_once") {
		t.Fatalf("submit: %v, want an invalid job naming checkpoint.unaligned", err)
	}
}

// TestUnalignedRestoreExactlyOnce fails a keyed exactly-once job with
// unaligned checkpoints, under backpressure, while it takes the checkpoint
// after one that stored in-flight data, so that the run restores that one:
// its in-flight data is replayed and the output is still each key's
// records exactly once, in order, with the state of the record before.
func TestUnalignedRestoreExactlyOnce(t *testing.T) {
	const keys, perKey = 100, 300
	m, js, mod := newSeqcheckJob(t, keys, perKey)
	ctx := context.Background()
	// The throttled sink is chained to track, so track's input channels
	// fill up and the sources wait: the barriers have data to overtake.
	spec := fmt.Sprintf(`
name: unaligned
parallelism: 2
checkpoint: {interval: 50ms, mode: exactly_once, unaligned: true}
restart: {strategy: fixed_delay, delay: 10ms}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 10000}]
`, mod.ID)
	fail := &failAfterInFlight{m: m}
	m.env.Faults = fail.inject
	fail.mu.Lock()
	info, err := m.SubmitJob(ctx, []byte(spec))
	if err != nil {
		fail.mu.Unlock()
		t.Fatal(err)
	}
	fail.job = info.ID
	fail.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	info, err = m.WaitJob(wctx, info.ID)
	if err != nil || info.State != StateFinished {
		t.Fatalf("job %s: %s, %v", info.State, info.Failure, err)
	}
	fail.mu.Lock()
	failedAfter := fail.after
	fail.mu.Unlock()
	if failedAfter.ID == 0 || info.Restarts != 1 {
		t.Fatalf("failed after checkpoint %+v, %d restarts, want one failure after a checkpoint with in-flight data", failedAfter, info.Restarts)
	}
	if r := info.Checkpoint.Restored; r == nil || r.Checkpoint != failedAfter.ID {
		t.Fatalf("restored %+v, want checkpoint %d (%d bytes in flight)", r, failedAfter.ID, failedAfter.InFlight)
	}
	t.Logf("restored checkpoint %d with %d of %d bytes in flight", failedAfter.ID, failedAfter.InFlight, failedAfter.Size)
	checkSeqOutput(t, js, keys, perKey)
}

// failAfterInFlight fails a job once, in the snapshot of the checkpoint
// that follows a completed one with in-flight data: the failed checkpoint
// cannot complete, so the restart restores the one with in-flight data.
type failAfterInFlight struct {
	m   *Manager
	job string

	mu sync.Mutex
	// after is the checkpoint restored, once the failure is injected.
	after checkpoint.Stats
}

func (f *failAfterInFlight) inject(point, job, task string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if job != f.job || point != exec.FaultSnapshot || f.after.ID != 0 {
		return nil
	}
	j, ok := f.m.job(job)
	if !ok || j.x.Checkpoints == nil {
		return nil
	}
	all := j.x.Checkpoints.History.All()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Status != checkpoint.StatusCompleted {
			continue
		}
		if all[i].InFlight == 0 {
			return nil
		}
		f.after = all[i]
		return fmt.Errorf("%w: snapshot in %s after checkpoint %d with %d bytes in flight", errInjected, task, all[i].ID, all[i].InFlight)
	}
	return nil
}

// TestUnalignedCheckpointWhileSourcesDrain: the whole bounded input fits in
// the exchange's buffers, so the sources read to their end at once and
// wait for a slow (throttled) sink to take what they sent before they end
// their channels. They still take checkpoints meanwhile, whose barriers
// overtake that output: the first checkpoint completes while the sink has
// taken less than half of the input, not once the sources' ends reach it
// behind all of it. The output is exact.
func TestUnalignedCheckpointWhileSourcesDrain(t *testing.T) {
	const keys, perKey = 80, 100
	m, js, mod := newSeqcheckJob(t, keys, perKey)
	ctx := context.Background()
	info, err := m.SubmitJob(ctx, fmt.Appendf(nil, `
name: drain
parallelism: 2
checkpoint: {interval: 100ms, mode: exactly_once, unaligned: true}
sources: [{id: in, jetstream: {stream: IN, subjects: ["in.0", "in.1", "in.2", "in.3"], bounded: true}}]
operators: [{id: track, input: in, key_by: {field: k}, process: {module: %s, function: track}}]
sinks: [{id: out, input: track, jetstream: {subject: out}, throttle: 2000}]
`, mod.ID))
	if err != nil {
		t.Fatal(err)
	}
	taken := int64(-1)
	for taken < 0 {
		got, err := m.GetJob(ctx, info.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State.Terminal() {
			t.Fatalf("job %s (%s) before a checkpoint completed", got.State, got.Failure)
		}
		if got.Checkpoint.Completed > 0 {
			for _, v := range got.Vertices {
				if v.ID == "out" {
					taken = v.RecordsIn
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if taken >= keys*perKey/2 {
		t.Fatalf("the first checkpoint completed once the sink had taken %d of %d records, want less than half", taken, keys*perKey)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if info, err = m.WaitJob(wctx, info.ID); err != nil || info.State != StateFinished {
		t.Fatalf("job %s: %s, %v", info.State, info.Failure, err)
	}
	checkSeqOutput(t, js, keys, perKey)
}
