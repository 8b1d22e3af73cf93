package exec

import (
	"context"
	"fmt"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
	"wasmstream.io/platform/watermark"
)

// wmPart checkpoints a source subtask's watermark generator.
type wmPart struct {
	Name string
	gen  *watermark.Generator
}

// snapshot encodes the generator on the task goroutine, between batches.
func (p *wmPart) snapshot(context.Context, int64) ([]operator.Blob, error) {
	return []operator.Blob{{Name: p.Name, Data: p.gen.Encode()}}, nil
}

// sourceSplitNames names the splits subtask i of source v reads, in the
// order its source numbers them (connector.SubtaskFilters; the whole stream
// is one unnamed filter, and so is a KV source's one filter, read by
// subtask 0); a generator has one unnamed split.
func sourceSplitNames(v *plan.Vertex, i int) []string {
	js := v.Source.JetStream
	if v.Source.KV != nil {
		return connector.SubtaskFilters([]string{""}, i, v.Parallelism)
	}
	if js == nil {
		return []string{""}
	}
	filters := js.Subjects
	if len(filters) == 0 {
		filters = []string{""}
	}
	return connector.SubtaskFilters(filters, i, v.Parallelism)
}

// checkpointWatermarks makes a source subtask's watermark generator part of
// its task's checkpoints and restores it. An ingestion-time generator
// follows the clock and has nothing to keep.
func (b *builder) checkpointWatermarks(ctx context.Context, t *Task, v *plan.Vertex, i int) error {
	g := t.time.gen
	if t.cp == nil || g == nil || g.Mode() == watermark.Ingestion {
		return nil
	}
	g.Names = sourceSplitNames(v, i)
	if len(g.Names) != g.Splits() {
		return fmt.Errorf("source %s subtask %d: %d splits, but the spec names %d", v.ID, i, g.Splits(), len(g.Names))
	}
	t.cp.add(&wmPart{Name: blobName(blobWatermark, v.ID, i), gen: g})
	if b.restore == nil {
		return nil
	}
	snaps := map[int][]watermark.SplitState{}
	for old, blob := range b.restore.blobs(blobWatermark, v.ID) {
		data, err := b.restore.read(ctx, blob)
		if err != nil {
			return err
		}
		if snaps[old], err = watermark.DecodeSnapshot(data); err != nil {
			return b.restore.fail(fmt.Errorf("source %s subtask %d watermarks: %w", v.ID, old, err))
		}
	}
	g.Restore(i, v.Parallelism, snaps)
	return nil
}
