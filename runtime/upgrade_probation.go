package runtime

import (
	"context"
	"fmt"
	"time"

	"wasmstream.io/platform/runtime/exec"
)

// probationFence lets a version's checkpoints complete only once its
// probation is over, committing the version (in the registry) at the first
// that does: until then nothing the version wrote is committed, so it can
// be rolled back to the checkpoint it took over at with output exactly
// once. Otherwise it passes to the job's lineage (cluster mode), if any.
type probationFence struct {
	j     *job
	inner exec.Lineage
}

// errOnProbation refuses a checkpoint of a version on probation.
var errOnProbation = fmt.Errorf("the job's new version is on probation")

func (f *probationFence) Trigger(ctx context.Context, id int64) error {
	if f.inner == nil {
		return nil
	}
	return f.inner.Trigger(ctx, id)
}

func (f *probationFence) Complete(ctx context.Context, id int64) error {
	if err := f.j.commitVersion(ctx); err != nil {
		return err
	}
	if f.inner == nil {
		return nil
	}
	return f.inner.Complete(ctx, id)
}

func (f *probationFence) Counts(id int64) bool {
	return f.inner == nil || f.inner.Counts(id)
}

func (f *probationFence) NextID() int64 {
	if f.inner == nil {
		return 0
	}
	return f.inner.NextID()
}

// commitVersion ends the probation of j's version if it is over, and
// records in the registry that the job runs it; an error while it is not
// over, or while the record cannot be written, keeps the checkpoint from
// completing. A version whose UDFs failed during its probation is rolled
// back.
func (j *job) commitVersion(ctx context.Context) error {
	j.mu.Lock()
	pr := j.probation
	if pr == nil || pr.passed {
		j.mu.Unlock()
		return nil
	}
	if pr.rollback != "" {
		j.mu.Unlock()
		return errOnProbation
	}
	records, udfErrors := j.probationCounts()
	if udfErrors > 0 {
		pr.rollback = fmt.Sprintf("its UDFs failed on %d records during its probation", udfErrors)
		cancel := j.cancelRun
		j.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return errOnProbation
	}
	if records < pr.change.records && time.Since(pr.started) < pr.change.wait {
		j.mu.Unlock()
		return fmt.Errorf("%w: %d of %d records processed", errOnProbation, records, pr.change.records)
	}
	rec := j.recordLocked()
	rec.Spec, rec.Modules, rec.Canary = j.spec, j.refs, j.canary
	rec.Versions = withOutcome(rec.Versions, VersionRunning, "")
	j.mu.Unlock()
	if err := j.persistCtx(ctx, rec); err != nil {
		return fmt.Errorf("commit the job's new version: %w", err)
	}
	j.mu.Lock()
	pr.passed = true
	j.versions = rec.Versions
	j.mu.Unlock()
	j.log.Info("new version committed", "version", len(rec.Versions))
	return nil
}

// probationCounts are the records in and UDF errors of the job's vertices
// that run a module function. j.mu is held.
func (j *job) probationCounts() (records, udfErrors int64) {
	for _, v := range j.x.Plan.Vertices {
		if v.Fn == nil {
			continue
		}
		for _, c := range j.x.Counters[v.ID] {
			records += c.In.Load()
			udfErrors += c.UDFErrors.Load()
		}
	}
	return records, udfErrors
}

// probationFailed decides a rollback when a run of a version on
// probation fails: its run is cancelled, and switchOver rolls it back.
func (j *job) probationFailed(err error) {
	j.mu.Lock()
	pr := j.probation
	if pr == nil || pr.passed || pr.rollback != "" {
		j.mu.Unlock()
		return
	}
	pr.rollback = "the new version failed: " + err.Error()
	cancel := j.cancelRun
	j.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// restartDuringSwitch handles a failure of the job's run while it
// switches: a pending switch is abandoned (the restart restores the
// current version), and a version on probation is rolled back.
func (j *job) restartDuringSwitch(err error) {
	j.mu.Lock()
	pending := j.switching != nil
	j.mu.Unlock()
	if pending {
		j.abandonSwitch("the job failed during the switch: " + err.Error())
	}
	j.probationFailed(err)
}
