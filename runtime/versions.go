package runtime

import (
	"context"
	"fmt"
	"time"

	"wasmstream.io/platform/runtime/plan"
)

// VersionInfo is one version of a job in its history: what it ran, the
// checkpoint it took over at, when, and how it went. The first version is
// the job as submitted; every upgrade and rescale adds one, and a rollback
// adds one that runs the previous version's spec again.
type VersionInfo struct {
	Version int `json:"version"`
	// Change is what made the version: submitted, upgrade, rescale,
	// canary, promote or rollback.
	Change string `json:"change"`
	// Modules are the modules the version runs, as JobInfo.Modules.
	Modules []JobModule `json:"modules,omitempty"`
	// Canary is the canary the version ran: key groups that ran other
	// modules (a canary version; promote and rollback end it).
	Canary *CanaryVersion `json:"canary,omitempty"`
	// Parallelism is each vertex's parallelism in this version.
	Parallelism map[string]int `json:"parallelism,omitempty"`
	// FromCheckpoint is the checkpoint the version took over at: the
	// previous version stopped at its barrier and this one restored it.
	FromCheckpoint int64     `json:"from_checkpoint,omitempty"`
	Started        time.Time `json:"started"`
	// Outcome is running, probation, replaced, rolled_back or failed.
	Outcome string `json:"outcome"`
	// Reason says why a version was rolled back or why its switch failed.
	Reason string `json:"reason,omitempty"`
}

// A version's outcomes.
const (
	// VersionRunning: the job runs this version (or ran it last, once the
	// job has ended).
	VersionRunning = "running"
	// VersionProbation: the version took over and none of its
	// checkpoints has completed yet; a failure rolls it back.
	VersionProbation = "probation"
	// VersionReplaced: a later version took over from it.
	VersionReplaced = "replaced"
	// VersionRolledBack: it failed during its probation, and the version
	// before it runs again from the checkpoint it took over at.
	VersionRolledBack = "rolled_back"
	// VersionFailed: the switch to it never happened (the checkpoint that
	// was to hand over failed, or the job failed or was cancelled first).
	VersionFailed = "failed"
)

// The changes that make versions.
const (
	changeSubmitted = "submitted"
	changeUpgrade   = "upgrade"
	changeRescale   = "rescale"
	changeRollback  = "rollback"
)

// parallelismOf is each vertex's parallelism in p.
func parallelismOf(p *plan.Plan) map[string]int {
	out := make(map[string]int, len(p.Vertices))
	for _, v := range p.Vertices {
		out[v.ID] = v.Parallelism
	}
	return out
}

// versionsLocked is the job's version history; a job that never changed
// has one version, the one submitted. j.mu is held.
func (j *job) versionsLocked() []VersionInfo {
	if len(j.versions) > 0 {
		return j.versions
	}
	return []VersionInfo{{Version: 1, Change: changeSubmitted, Modules: j.refs, Parallelism: parallelismOf(j.x.Plan), Started: j.created, Outcome: VersionRunning}}
}

// maxVersions bounds a job's version history: the oldest versions beyond
// it are forgotten (the numbers go on), so that neither the job nor its
// registry record grows with every switch.
const maxVersions = 100

// appendVersion returns versions with v added, as a new slice of at most
// maxVersions.
func appendVersion(versions []VersionInfo, v VersionInfo) []VersionInfo {
	out := append(append([]VersionInfo(nil), versions...), v)
	return out[max(0, len(out)-maxVersions):]
}

// nextVersion is the number of the version after versions.
func nextVersion(versions []VersionInfo) int {
	if len(versions) == 0 {
		return 1
	}
	return versions[len(versions)-1].Version + 1
}

// withOutcome returns versions with the last one's outcome and reason
// replaced, as a new slice: the versions of one job struct are never
// changed in place, since another may share them.
func withOutcome(versions []VersionInfo, outcome, reason string) []VersionInfo {
	out := append([]VersionInfo(nil), versions...)
	if n := len(out); n > 0 {
		out[n-1].Outcome, out[n-1].Reason = outcome, reason
	}
	return out
}

// resumeVersions rolls back a version that was on probation when the
// platform stopped: the record's spec and modules are the version's
// before it, which resumes from the checkpoint the new one took over at,
// since nothing of the new version was committed. The checkpoints the new
// version left after that one are deleted, so that the resumed version
// restores the one it is to.
func (m *Manager) resumeVersions(ctx context.Context, rec *jobRecord) error {
	from, ok := settleProbation(rec)
	if !ok {
		return nil
	}
	if m.checkpoints != nil {
		if err := m.discardAfter(ctx, rec.ID, from); err != nil {
			return fmt.Errorf("job %s: roll back its version on probation: %w", rec.ID, err)
		}
	}
	m.log.Warn("job resumes the version before the one on probation", "job", rec.ID, "checkpoint", from)
	return m.registry.put(ctx, rec)
}

// settleProbation marks the record's last version rolled back if it was
// on probation, adding the version before it as the one that runs, and
// returns the checkpoint the rolled back version took over at. In
// cluster mode the job's checkpoint lineage already keeps the new
// version's uncompleted checkpoints from being restored.
func settleProbation(rec *jobRecord) (int64, bool) {
	n := len(rec.Versions)
	if n < 2 || rec.Versions[n-1].Outcome != VersionProbation {
		return 0, false
	}
	from := rec.Versions[n-1].FromCheckpoint
	versions := withOutcome(rec.Versions, VersionRolledBack, "the platform stopped during its probation")
	rec.Versions = appendVersion(versions, VersionInfo{Version: nextVersion(versions), Change: changeRollback, Modules: rec.Modules, Canary: rec.Canary.public(), Parallelism: versions[n-2].Parallelism,
		FromCheckpoint: from, Started: time.Now().UTC(), Outcome: VersionRunning})
	return from, true
}
