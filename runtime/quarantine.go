package runtime

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/runtime/operator"
)

// QuarantinedKey is a poison key a keyed operator subtask has parked.
type QuarantinedKey = operator.QuarantinedKey

// Quarantined lists the keys job id has parked under on_udf_error:
// quarantine, by operator, subtask and key; empty for a job that has ended
// or quarantines nothing.
func (m *Manager) Quarantined(_ context.Context, id string) ([]QuarantinedKey, error) {
	j, ok := m.job(id)
	if !ok {
		return nil, m.notRunningHere(id)
	}
	if j.state().Terminal() {
		return []QuarantinedKey{}, nil
	}
	return j.x.Quarantines.List(), nil
}

// ReleaseQuarantined asks every operator subtask of job id that parked key
// to replay its kept records through the operator, in order; each does at
// its next batch, watermark or tick, and the release holds once the
// checkpoint after it completes. It returns the parked entries released.
func (m *Manager) ReleaseQuarantined(_ context.Context, id, key string) ([]QuarantinedKey, error) {
	j, ok := m.job(id)
	if !ok {
		return nil, m.notRunningHere(id)
	}
	if j.state().Terminal() {
		return nil, fmt.Errorf("job %s is %s: %w", id, j.state(), ErrFinished)
	}
	released, err := j.x.Quarantines.Release(key)
	if errors.Is(err, operator.ErrNotQuarantined) {
		return nil, fmt.Errorf("job %s: key %q is not quarantined: %w", id, key, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	j.log.Info("quarantined key released", "key", key, "subtasks", len(released))
	return released, nil
}

// notRunningHere is the error for a job this process does not run: not
// found, or finished when it is a past job.
func (m *Manager) notRunningHere(id string) error {
	m.mu.Lock()
	_, past := m.past[id]
	m.mu.Unlock()
	if past {
		return fmt.Errorf("job %s: %w", id, ErrFinished)
	}
	return fmt.Errorf("job %s: %w", id, ErrNotFound)
}
