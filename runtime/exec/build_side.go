package exec

import (
	"context"
	"errors"
	"fmt"

	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/runtime/spec"
)

// sideOutputs builds what consumes v's side outputs in subtask i: the
// stage of its late records (nil when nothing reads them), and the side
// outputs its function writes (nil when it declares none).
func (b *builder) sideOutputs(ctx context.Context, t *Task, v *plan.Vertex, i int) (operator.Stage, *operator.SideOutputs, error) {
	late, err := b.edgeStages(ctx, t, v, i, spec.LateOutput)
	if err != nil {
		return nil, nil, err
	}
	names := v.Op.SideOutputs
	stages := make([]operator.Stage, 0, len(names))
	closeAll := func(err error) error {
		if late != nil {
			err = errors.Join(err, late.Close(ctx))
		}
		return errors.Join(err, operator.Fanout(stages).Close(ctx))
	}
	for _, name := range names {
		s, err := b.edgeStages(ctx, t, v, i, name)
		if err != nil {
			return nil, nil, closeAll(err)
		}
		if s == nil {
			// Submission refuses a side output no one reads.
			return nil, nil, closeAll(fmt.Errorf("operator[%s]: side output %q has no consumer", v.ID, name))
		}
		stages = append(stages, s)
	}
	return late, operator.NewSideOutputs(v.ID, b.j.Plan.Job.UDF.BatchSize, names, stages), nil
}
