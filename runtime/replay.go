package runtime

import (
	"context"
	"fmt"

	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/replay"
)

// ReplayKey replays one key of a job from one of its checkpoints in a
// sandbox inside this process (runtime/replay): the job's plan and
// modules, its checkpoint storage and its source's stream are here. The
// job may be running or ended. report takes each event; an error of the
// replay package (replay.ErrUnknownCheckpoint, ...) says what was wrong
// with the request.
func (m *Manager) ReplayKey(ctx context.Context, id string, req replay.Request, report func(replay.Event) error) error {
	p, err := m.replayPlan(ctx, id)
	if err != nil {
		return err
	}
	if req.Module != "" {
		if req.Module, err = m.ResolveModule(req.Module); err != nil {
			return fmt.Errorf("%w: module: %w", replay.ErrBadRequest, err)
		}
	}
	env := replay.Env{Job: id, Plan: p, Module: m.hostModule, Checkpoints: m.checkpoints, JetStream: m.cfg.JetStream, Log: m.log.With("job", id, "replay", true)}
	return replay.Run(ctx, env, req, report)
}

// replayPlan is the plan a job runs, or ran: an ended job's spec is planned
// again with the modules it was pinned to.
func (m *Manager) replayPlan(ctx context.Context, id string) (*plan.Plan, error) {
	if j, ok := m.job(id); ok {
		return j.x.Plan, nil
	}
	m.mu.Lock()
	rec, ok := m.past[id]
	if !ok {
		rec, ok = m.remoteRecord(id)
	}
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	p, _, _, err := m.check(ctx, rec.Spec, "", false, rec.Modules)
	return p, err
}
