package watermark

import (
	"encoding/binary"
	"fmt"
	"sort"

	"wasmstream.io/platform/internal/snapenc"
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

// SplitState is one split's part of a watermark generator snapshot.
type SplitState struct {
	Name    string
	MaxTs   int64
	PunctWM int64
	Idle    bool
}

func (g *Generator) Encode() []byte {
	b := append([]byte(wmGenMagic), wmGenVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(g.splits)))
	for i, sp := range g.splits {
		b = snapenc.AppendBytes(b, []byte(g.Names[i]))
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

// DecodeSnapshot reads a watermark generator snapshot.
func DecodeSnapshot(data []byte) ([]SplitState, error) {
	d := &snapenc.Decoder{B: data}
	if string(d.Take(len(wmGenMagic))) != wmGenMagic {
		return nil, fmt.Errorf("not a watermark generator snapshot")
	}
	if v := d.U8(); v != wmGenVersion {
		return nil, fmt.Errorf("watermark generator snapshot version %d, want %d", v, wmGenVersion)
	}
	var out []SplitState
	for n := d.U32(); n > 0 && d.Err == nil; n-- {
		s := SplitState{Name: string(d.Bytes()), MaxTs: d.I64(), PunctWM: d.I64()}
		switch idle := d.U8(); {
		case d.Err != nil:
		case idle > 1:
			return nil, fmt.Errorf("split %q: idle flag %d, want 0 or 1", s.Name, idle)
		default:
			s.Idle = idle == 1
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

// Restore sets, before the first batch, each split's event time from the
// snapshots of the old subtasks (by old subtask) that name it. A subject
// filter is in one snapshot only. An unnamed split is every old subtask's:
// at an unchanged parallelism the subtask takes its own, otherwise the
// lowest, so that no record is taken for late that was not. Idle splits
// stay idle until their next record; the first tick announces a subtask
// whose splits all are. The restored watermark goes out at the first tick,
// since the consumers start without one.
func (g *Generator) Restore(subtask, parallelism int, snaps map[int][]SplitState) {
	for k, name := range g.Names {
		s, ok := pickSplitState(name, subtask, parallelism, snaps)
		if !ok {
			continue
		}
		sp := &g.splits[k]
		sp.maxTs, sp.punctWM = s.MaxTs, s.PunctWM
		wm := s.PunctWM
		if g.mode == Bounded {
			wm = boundedWatermark(s.MaxTs, g.delay)
		}
		g.valve.Update(k, wm)
		if s.Idle {
			sp.idle = true
			g.valve.SetIdle(k, true)
		}
	}
}

// pickSplitState finds the restored state of split name for subtask.
func pickSplitState(name string, subtask, parallelism int, snaps map[int][]SplitState) (SplitState, bool) {
	var found []SplitState
	olds := make([]int, 0, len(snaps))
	for old := range snaps {
		olds = append(olds, old)
	}
	sort.Ints(olds)
	for _, old := range olds {
		for _, s := range snaps[old] {
			if s.Name != name {
				continue
			}
			if old == subtask && len(snaps) == parallelism {
				return s, true
			}
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		return SplitState{}, false
	}
	low := found[0]
	for _, s := range found[1:] {
		low.MaxTs, low.PunctWM = min(low.MaxTs, s.MaxTs), min(low.PunctWM, s.PunctWM)
		low.Idle = low.Idle && s.Idle
	}
	return low, true
}
