package join

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/internal/snapenc"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/state"
)

// An interval join's snapshot, little-endian:
//
//	"WSIJ" | u8 version 1 | i64 watermark | side left | side right
//	side: u32 key count | key*
//	key:  bytes key | u32 record count | record*  (a key may come again)
//	record: i64 timestamp | bytes value
//
// where bytes is u32 length | bytes. Expiries are not stored: they follow
// from the timestamps and the join's bounds, and are computed again on
// restore, which also lets keys move between subtasks when parallelism
// changes.
// BlobKind is the kind of an interval join's snapshot blobs.
const BlobKind = "join"

const (
	joinMagic   = "WSIJ"
	joinVersion = 1
)

// StateKind is the kind of an interval join's snapshot blobs.
func (j *Interval) StateKind() string { return BlobKind }

// Snapshot encodes the buffers on the task goroutine: between batches no
// join function call is pending.
func (j *Interval) Snapshot(context.Context) (operator.Blob, error) {
	return operator.Blob{Data: j.encode()}, nil
}

// encode writes the snapshot. The budget's count of used bytes bounds its
// size, so one allocation holds it.
func (j *Interval) encode() []byte {
	b := make([]byte, 0, int64(len(joinMagic)+1+8+2*4)+j.used)
	b = append(append(b, joinMagic...), joinVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(j.wm))
	for side := range j.sides {
		s := &j.sides[side]
		if !s.indexed() {
			// A key of its own for each record of a log: keys may repeat.
			b = binary.LittleEndian.AppendUint32(b, uint32(len(s.log)-s.head))
			for i := s.head; i < len(s.log); i++ {
				r := &s.log[i]
				b = snapenc.AppendBytes(b, r.key())
				b = binary.LittleEndian.AppendUint32(b, 1)
				b = binary.LittleEndian.AppendUint64(b, uint64(r.ts))
				b = snapenc.AppendBytes(b, r.value())
			}
			continue
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.keys)))
		for _, k := range s.keys {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(k.key)))
			b = append(b, k.key...)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(k.recs)))
			for _, r := range k.recs {
				b = binary.LittleEndian.AppendUint64(b, uint64(r.ts))
				b = snapenc.AppendBytes(b, r.value)
			}
		}
	}
	return b
}

// restore loads, before the first batch, the buffered records of the keys
// whose key groups rng holds from snapshots of any parallelism. The
// watermark is the lowest of the snapshots': a subtask's own was at least
// that, so no record it would have joined is taken for late.
func (j *Interval) Restore(_ context.Context, srcs []io.Reader, maxP int, rng state.Range) error {
	if len(srcs) == 0 {
		return nil
	}
	decoded := make([]*snapenc.Decoder, 0, len(srcs))
	wm := int64(0)
	for i, src := range srcs {
		data, err := io.ReadAll(src)
		if err != nil {
			return fmt.Errorf("operator[%s]: interval join snapshot %d: %w", j.vertex, i, err)
		}
		d, snapWM, err := openJoinSnapshot(data)
		if err != nil {
			return fmt.Errorf("operator[%s]: interval join snapshot %d: %w", j.vertex, i, err)
		}
		if i == 0 || snapWM < wm {
			wm = snapWM
		}
		decoded = append(decoded, d)
	}
	j.wm = wm
	for i, d := range decoded {
		var overBudget error
		err := readJoinSnapshot(d, func(side int, key []byte, ts int64, value []byte) error {
			if !rng.Contains(state.KeyGroup(key, maxP)) {
				return nil
			}
			overBudget = j.buffer(side, key, ts, value)
			return overBudget
		})
		if overBudget != nil {
			return overBudget
		}
		if err != nil {
			return fmt.Errorf("operator[%s]: interval join snapshot %d: %w", j.vertex, i, err)
		}
	}
	return nil
}

// openJoinSnapshot checks a snapshot's header and returns its watermark and
// a decoder at its first side.
func openJoinSnapshot(data []byte) (*snapenc.Decoder, int64, error) {
	d := &snapenc.Decoder{B: data}
	if string(d.Take(len(joinMagic))) != joinMagic {
		return nil, abi.NoWatermark, fmt.Errorf("not an interval join snapshot")
	}
	if v := d.U8(); v != joinVersion {
		return nil, abi.NoWatermark, fmt.Errorf("interval join snapshot version %d, want %d", v, joinVersion)
	}
	wm := d.I64()
	return d, wm, d.Err
}

// readJoinSnapshot calls rec for every buffered record of both sides, in
// their order per key.
func readJoinSnapshot(d *snapenc.Decoder, rec func(side int, key []byte, ts int64, value []byte) error) error {
	for side := range 2 {
		for n := d.U32(); n > 0 && d.Err == nil; n-- {
			key := d.Bytes()
			for m := d.U32(); m > 0 && d.Err == nil; m-- {
				ts, value := d.I64(), d.Bytes()
				if d.Err != nil {
					break
				}
				if err := rec(side, key, ts, value); err != nil {
					return err
				}
			}
		}
		if d.Err != nil {
			return fmt.Errorf("%s side: %w", [2]string{"left", "right"}[side], d.Err)
		}
	}
	if len(d.B) > 0 {
		return fmt.Errorf("%d bytes after the last record", len(d.B))
	}
	return nil
}
