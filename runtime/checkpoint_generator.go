package runtime

import (
	"context"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/plan"
)

// generator builds subtask i of generator source v, resuming its splits at
// the restored checkpoint's positions. The splits are the job's key groups
// in number, which no parallelism exceeds, so positions carry over when the
// parallelism changes.
func (b *builder) generator(ctx context.Context, v *plan.Vertex, i int) (connector.Source, error) {
	g := v.Source.Generator
	cfg := connector.GeneratorConfig{
		Kind: g.Kind, Rate: g.Rate, Count: g.Count, Keys: g.Keys,
		Subtask: i, Parallelism: v.Parallelism, Splits: b.j.plan.Job.MaxParallelism,
	}
	if b.restore == nil {
		return connector.NewGenerator(cfg)
	}
	start, err := b.restore.positions(ctx, v.ID)
	if err != nil {
		return nil, err
	}
	cfg.Start = start
	src, err := connector.NewGenerator(cfg)
	if err != nil {
		return nil, b.restore.fail(err)
	}
	return src, nil
}
