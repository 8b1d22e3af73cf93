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
	late, err := b.sideStage(ctx, t, v, i, spec.LateOutput)
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
		s, err := b.sideStage(ctx, t, v, i, name)
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

// sideStage builds the stages that receive v's side output name: its edges
// carrying it, chained or through the exchange. Nil when it has none.
func (b *builder) sideStage(ctx context.Context, t *Task, v *plan.Vertex, i int, name string) (operator.Stage, error) {
	var outs operator.Fanout
	for _, e := range v.Out {
		if e.Side != name {
			continue
		}
		if e.Chained() {
			s, err := b.vertexStage(ctx, t, e.To, i)
			if err != nil {
				return nil, errors.Join(err, outs.Close(ctx))
			}
			outs = append(outs, s)
			continue
		}
		outs = append(outs, b.exchangeStage(t, v, e, i))
	}
	switch len(outs) {
	case 0:
		return nil, nil
	case 1:
		return outs[0], nil
	}
	return outs, nil
}
