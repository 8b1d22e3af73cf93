package exec

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/plan"
)

// Job is a job as its subtasks run it: what to run (the plan), the
// counters its subtasks write, its checkpointing and the platform's
// handles. The job manager makes one per job; it does not change while the
// job runs.
type Job struct {
	ID   string
	Plan *plan.Plan
	Log  *slog.Logger
	Env  *Env
	// Counters are each vertex's figures, one per subtask.
	Counters map[string][]*Counters
	// Checkpoints is the job's checkpointing, nil when it takes none.
	Checkpoints *Checkpoints
	// BoundedEnd returns the end of a bounded source, computing it with
	// compute the first time and keeping it with the job, so that a job
	// that resumes ends at the same place.
	BoundedEnd func(source string, compute func() (map[string]uint64, error)) (map[string]uint64, error)
	// Observer hears what the job's runs do.
	Observer Observer
	// SinkFence, in cluster mode, gives the fencing token each
	// exactly-once sink (and dead-letter) subtask commits under, by the
	// subtask's key (its message id prefix) and subject; nil commits
	// unfenced.
	SinkFence func(ctx context.Context, key, subject string) (*connector.Fence, error)
	// Exceptions are the job's last failures (restart_history.go).
	Exceptions ExceptionHistory
	// Quarantines are the current run's poison-key quarantines.
	Quarantines Quarantines
	// Pressure samples the backpressure of the job's subtasks; in a run
	// spread over workers, the others send theirs to the leader's. Nil
	// samples nothing across workers.
	Pressure *PressureSampler
	// Place, in cluster mode, places each run's subtasks on workers; nil
	// runs them all here (placement.go).
	Place Placer
	// Canary, when set, runs part of the key space on another version
	// of the job's keyed vertices (canary.go).
	Canary *Canary

	// part is the placement of the run a worker other than the leader
	// runs part of (RunPart), and partFail fails that part.
	part     *Placement
	partFail func(error)
}

// Env holds the platform's handles that subtasks use.
type Env struct {
	JetStream jetstream.JetStream
	DataDir   string
	// Budgets bound the memory of the job's subtasks, defaults filled in
	// (Budgets.WithDefaults).
	Budgets Budgets
	// Module finds an uploaded module by id.
	Module func(id string) (*host.Module, bool)
	// Faults, when set, may fail a task at a fault point (FaultProcess,
	// ...). Only tests set it, before starting jobs; it must be safe for
	// concurrent use.
	Faults func(point, job, task string) error
	// NATS, when set, says whether the connection to NATS holds: a run
	// that fails while it is lost, or after it was lost during the run,
	// waits for it and restarts without counting against the job's
	// restart strategy (restart.go).
	NATS Connectivity
}

// Connectivity is the state of the platform's NATS connection.
type Connectivity interface {
	// Reconnects counts the times the connection was re-established.
	Reconnects() uint64
	// WaitConnected blocks until the connection is up or ctx ends.
	WaitConnected(ctx context.Context) error
}

// Observer hears what the runs of a job do.
type Observer interface {
	// Running: a run's tasks are built (and restored) and start; done is
	// called when the run ends.
	Running(tasks []*Task) (done func())
	// Restarting: a run failed, and the next starts after delay.
	Restarting(attempt int, delay time.Duration, err error)
}
