package runtime

// Fault points where tests inject failures into checkpointing (Flink's
// failing-mapper schedule): while processing input, while taking a
// snapshot, while restoring, and on close after the end of input.
const (
	faultProcess  = "process"
	faultSnapshot = "snapshot"
	faultRestore  = "restore"
	faultClose    = "close"
)

// faultInjector, when set, may fail a task at a fault point: a non-nil
// error becomes the task's failure. Only tests set it, before starting
// jobs; it must be safe for concurrent use.
var faultInjector func(point, job, task string) error

// fault asks the injector about a point.
func fault(point, job, task string) error {
	if faultInjector == nil {
		return nil
	}
	return faultInjector(point, job, task)
}
