package exec

// Fault points where tests inject failures into checkpointing (Flink's
// failing-mapper schedule): while processing input, while taking a
// snapshot, while restoring, and on close after the end of input.
const (
	FaultProcess  = "process"
	FaultSnapshot = "snapshot"
	FaultRestore  = "restore"
	FaultClose    = "close"
)

// fault asks the job's fault injector (Env.Faults), if any, about a point
// of one of its tasks: a non-nil error becomes the task's failure.
func (j *Job) fault(point, task string) error {
	if j.Env.Faults == nil {
		return nil
	}
	return j.Env.Faults(point, j.ID, task)
}
