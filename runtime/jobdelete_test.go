package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"wasmstream.io/platform/checkpoint"
	"wasmstream.io/platform/internal/wasmbuild"
)

const deletableJob = `name: deletable
checkpoint: {interval: 1h}
sources: [{id: gen, generator: {kind: sequence, rate: 1000}}]
operators: [{id: up, input: gen, map: {module: upper, function: upper}}]
sinks: [{id: out, input: up, discard: true}]
`

// waitSavepoint triggers a savepoint of job (a stopping one with stop)
// and waits until it completed; a failed savepoint fails the test.
func waitSavepoint(t *testing.T, m *Manager, job string, stop bool) string {
	t.Helper()
	ctx := context.Background()
	var sp SavepointInfo
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if stop {
			sp, err = m.StopJob(ctx, job)
		} else {
			sp, err = m.TriggerSavepoint(ctx, job)
		}
		if !errors.Is(err, ErrNotRunning) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("savepoint of %s: %v", job, err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, err := m.Savepoints(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.ID == sp.ID && s.Status == checkpoint.StatusFailed {
				t.Fatalf("savepoint failed: %+v", s)
			}
			if s.ID == sp.ID && s.Status == checkpoint.StatusCompleted {
				return sp.ID
			}
		}
	}
	t.Fatalf("savepoint %s did not complete", sp.ID)
	return ""
}

func savepointIDs(t *testing.T, m *Manager, job string) []string {
	t.Helper()
	list, err := m.Savepoints(context.Background(), job)
	if err != nil {
		t.Fatalf("savepoints of %s: %v", job, err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// storedKinds lists a job's stored snapshots as "<kind> <id>".
func storedKinds(t *testing.T, m *Manager, job string) []string {
	t.Helper()
	all, err := m.checkpoints.List(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, md := range all {
		out = append(out, fmt.Sprintf("%s %d", md.Kind, md.ID))
	}
	return out
}

// TestDeleteJobAndSavepoints: a running job cannot be deleted; an ended one
// leaves the list and the registry with its checkpoints, its savepoints
// kept (listed and deletable), unless asked; a savepoint a running job
// started from cannot be deleted; retention removes ended jobs older than
// it.
func TestDeleteJobAndSavepoints(t *testing.T) {
	ctx := context.Background()
	m, _ := newJetStreamManager(t)
	if _, err := m.UploadNamedModule(ctx, wasmbuild.UDF(t, "upper-wat"), "upper"); err != nil {
		t.Fatal(err)
	}
	info, err := m.SubmitJob(ctx, []byte(deletableJob))
	if err != nil {
		t.Fatal(err)
	}
	job := info.ID
	sp1 := waitSavepoint(t, m, job, false)
	if err := m.DeleteJob(ctx, job, false); !errors.Is(err, ErrNotEnded) || err.Error() != "job "+job+" is RUNNING; cancel or stop it first: job has not ended" {
		t.Fatalf("delete a running job: %v", err)
	}
	// The newest snapshot of a running job is what a restart restores.
	if err := m.DeleteSavepoint(ctx, job, sp1); !errors.Is(err, ErrSavepointInUse) {
		t.Fatalf("delete the newest snapshot of a running job: %v", err)
	}
	sp2 := waitSavepoint(t, m, job, true)
	if info, err := m.WaitJob(ctx, job); err != nil || info.State != StateFinished {
		t.Fatalf("stopped job: %s %v", info.State, err)
	}
	// A checkpoint of the job, as retention would have left one.
	if err := m.checkpoints.Commit(ctx, &checkpoint.Metadata{Job: job, ID: 100, Kind: checkpoint.KindCheckpoint, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got, want := storedKinds(t, m, job), []string{"savepoint 1", "savepoint 2", "checkpoint 100"}; !slices.Equal(got, want) {
		t.Fatalf("stored %q, want %q", got, want)
	}

	if err := m.DeleteJob(ctx, job, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetJob(ctx, job); !errors.Is(err, ErrNotFound) {
		t.Errorf("get a deleted job: %v", err)
	}
	if _, _, err := m.JobSpec(ctx, job); !errors.Is(err, ErrNotFound) {
		t.Errorf("spec of a deleted job: %v", err)
	}
	if err := m.DeleteJob(ctx, job, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	recs, err := m.registry.all(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.ID == job {
			t.Errorf("the registry still has job %s", job)
		}
	}
	if got, want := storedKinds(t, m, job), []string{"savepoint 1", "savepoint 2"}; !slices.Equal(got, want) {
		t.Errorf("after delete, stored %q, want %q", got, want)
	}
	if got, want := savepointIDs(t, m, job), []string{sp1, sp2}; !slices.Equal(got, want) {
		t.Errorf("savepoints of the deleted job %q, want %q", got, want)
	}

	// A job from sp2 keeps it in use until it ends.
	from, err := m.SubmitJobFromSavepoint(ctx, []byte(deletableJob), sp2, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteSavepoint(ctx, job, sp2); !errors.Is(err, ErrSavepointInUse) ||
		err.Error() != "savepoint "+sp2+": jobs "+from.ID+" started from it and have not ended: savepoint in use" {
		t.Errorf("delete a savepoint in use: %v", err)
	}
	if err := m.DeleteSavepoint(ctx, job, sp1); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []string{sp1, job + "-100", "other-1", "x"} {
		if err := m.DeleteSavepoint(ctx, job, sp); !errors.Is(err, ErrNotFound) {
			t.Errorf("delete %s: %v", sp, err)
		}
	}
	if got, want := savepointIDs(t, m, job), []string{sp2}; !slices.Equal(got, want) {
		t.Errorf("savepoints after deleting %s: %q, want %q", sp1, got, want)
	}
	own := waitSavepoint(t, m, from.ID, false)
	if _, err := m.CancelJob(ctx, from.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteSavepoint(ctx, job, sp2); err != nil {
		t.Errorf("delete after the job from it ended: %v", err)
	}
	if _, err := m.Savepoints(ctx, job); !errors.Is(err, ErrNotFound) {
		t.Errorf("savepoints of a deleted job without any: %v", err)
	}

	// Retention: the cancelled job is removed once it is old enough, its
	// savepoint kept; a running one never is.
	running, err := m.SubmitJob(ctx, []byte(deletableJob))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.sweep(ctx, time.Now(), time.Hour); len(got) != 0 {
		t.Errorf("swept %q before the retention passed", got)
	}
	if got, want := m.sweep(ctx, time.Now().Add(2*time.Hour), time.Hour), []string{from.ID}; !slices.Equal(got, want) {
		t.Errorf("swept %q, want %q", got, want)
	}
	if _, err := m.GetJob(ctx, from.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a swept job: %v", err)
	}
	if got, want := savepointIDs(t, m, from.ID), []string{own}; !slices.Equal(got, want) {
		t.Errorf("savepoints of the swept job %q, want %q", got, want)
	}
	if info, err := m.GetJob(ctx, running.ID); err != nil || info.State.Terminal() {
		t.Errorf("the running job: %s %v", info.State, err)
	}

	// With savepoints=true nothing of the job is left.
	if _, err := m.CancelJob(ctx, running.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.checkpoints.Commit(ctx, &checkpoint.Metadata{Job: running.ID, ID: 7, Kind: checkpoint.KindSavepoint, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteJob(ctx, running.ID, true); err != nil {
		t.Fatal(err)
	}
	if got := storedKinds(t, m, running.ID); len(got) != 0 {
		t.Errorf("after delete with savepoints, stored %q", got)
	}
}
