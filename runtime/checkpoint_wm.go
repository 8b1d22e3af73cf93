package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// A source subtask's watermark generator snapshot, little-endian:
//
//	"WSWG" | u8 version 1 | u32 split count | split*
//	split: bytes name | i64 max timestamp | i64 punctuated watermark | u8 idle
//
// where bytes is u32 length | bytes. A split is named by its subject filter
// ("" for a whole stream or a generator), so that a restore finds it
// whichever subtask reads it now.
const (
	wmGenMagic   = "WSWG"
	wmGenVersion = 1
)

// wmSplitState is one split's part of a watermark generator snapshot.
type wmSplitState struct {
	name    string
	maxTs   int64
	punctWM int64
	idle    bool
}

// wmPart checkpoints a source subtask's watermark generator.
type wmPart struct {
	name string
	gen  *wmSource
}

// snapshot encodes the generator on the task goroutine, between batches.
func (p *wmPart) snapshot(context.Context, int64) ([]operator.Blob, error) {
	return []operator.Blob{{Name: p.name, Data: p.gen.encode()}}, nil
}

func (g *wmSource) encode() []byte {
	b := append([]byte(wmGenMagic), wmGenVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(g.splits)))
	for i, sp := range g.splits {
		b = operator.AppendBytes(b, []byte(g.names[i]))
		b = binary.LittleEndian.AppendUint64(b, uint64(sp.maxTs))
		b = binary.LittleEndian.AppendUint64(b, uint64(sp.punctWM))
		idle := byte(0)
		if sp.idle {
			idle = 1
		}
		b = append(b, idle)
	}
	return b
}

// decodeWMSnapshot reads a watermark generator snapshot.
func decodeWMSnapshot(data []byte) ([]wmSplitState, error) {
	d := &operator.Decoder{B: data}
	if string(d.Take(len(wmGenMagic))) != wmGenMagic {
		return nil, fmt.Errorf("not a watermark generator snapshot")
	}
	if v := d.U8(); v != wmGenVersion {
		return nil, fmt.Errorf("watermark generator snapshot version %d, want %d", v, wmGenVersion)
	}
	var out []wmSplitState
	for n := d.U32(); n > 0 && d.Err == nil; n-- {
		s := wmSplitState{name: string(d.Bytes()), maxTs: d.I64(), punctWM: d.I64()}
		switch idle := d.U8(); {
		case d.Err != nil:
		case idle > 1:
			return nil, fmt.Errorf("split %q: idle flag %d, want 0 or 1", s.name, idle)
		default:
			s.idle = idle == 1
			out = append(out, s)
		}
	}
	if d.Err != nil {
		return nil, d.Err
	}
	if len(d.B) > 0 {
		return nil, fmt.Errorf("%d bytes after the last split", len(d.B))
	}
	return out, nil
}

// restore sets, before the first batch, each split's event time from the
// snapshots of the old subtasks (by old subtask) that name it. A subject
// filter is in one snapshot only. An unnamed split is every old subtask's:
// at an unchanged parallelism the subtask takes its own, otherwise the
// lowest, so that no record is taken for late that was not. Idle splits
// stay idle until their next record; the first tick announces a subtask
// whose splits all are. The restored watermark goes out at the first tick,
// since the consumers start without one.
func (g *wmSource) restore(subtask, parallelism int, snaps map[int][]wmSplitState) {
	for k, name := range g.names {
		s, ok := pickSplitState(name, subtask, parallelism, snaps)
		if !ok {
			continue
		}
		sp := &g.splits[k]
		sp.maxTs, sp.punctWM = s.maxTs, s.punctWM
		wm := s.punctWM
		if g.mode == wmBounded {
			wm = boundedWatermark(s.maxTs, g.delay)
		}
		g.valve.Update(k, wm)
		if s.idle {
			sp.idle = true
			g.valve.SetIdle(k, true)
		}
	}
}

// pickSplitState finds the restored state of split name for subtask.
func pickSplitState(name string, subtask, parallelism int, snaps map[int][]wmSplitState) (wmSplitState, bool) {
	var found []wmSplitState
	olds := make([]int, 0, len(snaps))
	for old := range snaps {
		olds = append(olds, old)
	}
	sort.Ints(olds)
	for _, old := range olds {
		for _, s := range snaps[old] {
			if s.name != name {
				continue
			}
			if old == subtask && len(snaps) == parallelism {
				return s, true
			}
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return wmSplitState{}, false
	}
	low := found[0]
	for _, s := range found[1:] {
		low.maxTs, low.punctWM = min(low.maxTs, s.maxTs), min(low.punctWM, s.punctWM)
		low.idle = low.idle && s.idle
	}
	return low, true
}

// sourceSplitNames names the splits subtask i of source v reads, in the
// order its source numbers them (connector.SubtaskFilters; the whole stream
// is one unnamed filter); a generator has one unnamed split.
func sourceSplitNames(v *plan.Vertex, i int) []string {
	js := v.Source.JetStream
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
func (b *builder) checkpointWatermarks(ctx context.Context, t *task, v *plan.Vertex, i int) error {
	g := t.time.gen
	if t.cp == nil || g == nil || g.mode == wmIngestion {
		return nil
	}
	g.names = sourceSplitNames(v, i)
	if len(g.names) != len(g.splits) {
		return fmt.Errorf("source %s subtask %d: %d splits, but the spec names %d", v.ID, i, len(g.splits), len(g.names))
	}
	t.cp.add(&wmPart{name: blobName(blobWatermark, v.ID, i), gen: g})
	if b.restore == nil {
		return nil
	}
	snaps := map[int][]wmSplitState{}
	for old, blob := range b.restore.blobs(blobWatermark, v.ID) {
		data, err := b.restore.read(ctx, blob)
		if err != nil {
			return err
		}
		if snaps[old], err = decodeWMSnapshot(data); err != nil {
			return b.restore.fail(fmt.Errorf("source %s subtask %d watermarks: %w", v.ID, old, err))
		}
	}
	g.restore(i, v.Parallelism, snaps)
	return nil
}
