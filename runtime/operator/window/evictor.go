package window

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// Evictors remove records from a firing window, before its window function
// runs or after it, as Flink's EvictingWindowOperator: what they remove is
// gone from the window, for its later firings too. They work on the
// records a window_process function's slots keep (encoded as frames carry
// them), in arrival order:
//
//   - count keeps the last max records;
//   - time keeps the records whose timestamp is after the window's latest
//     timestamp − size;
//   - delta keeps the records whose JSON number field is less than
//     threshold from the last record's (|x − last| < threshold).
//
// None of them empties a window (the last record is always kept), so a
// window function is never called without records.

// evictorKind is a built-in evictor.
type evictorKind uint8

const (
	evictCount evictorKind = iota
	evictTime
	evictDelta
	// evictCustom is a custom evictor, whose function is custom.
	evictCustom
)

// evictor is a window operator's evictor, with its scratch.
type evictor struct {
	kind      evictorKind
	max, size int64
	threshold float64
	field     string
	after     bool
	// both runs the evictor before and after the window function; custom
	// is a custom evictor's function (evictor_udf.go), nil for a built-in.
	both   bool
	custom *operator.GroupRunner

	// A custom evictor's answers of one run, and the firings it skips.
	bitmaps []byte
	answers []keepAnswer
	skip    []bool

	kept    []byte
	scratch []byte
	values  []float64
}

func newEvictor(e *plan.Evictor) *evictor {
	if e == nil {
		return nil
	}
	ev := &evictor{max: e.Max, size: e.Size, threshold: e.Threshold, field: e.Field, after: e.After, both: e.Both}
	switch e.Type {
	case plan.EvictorTime:
		ev.kind = evictTime
	case plan.EvictorDelta:
		ev.kind = evictDelta
	case plan.EvictorCustom:
		ev.kind = evictCustom
	default:
		ev.kind = evictCount
	}
	return ev
}

// runs reports whether the evictor runs at op: before the window function
// (abi.OpEvictBefore) or after it (abi.OpEvictAfter).
func (e *evictor) runs(op abi.Op) bool {
	if e.both {
		return true
	}
	return e.after == (op == abi.OpEvictAfter)
}

// errCorrupt is the error of window contents that do not decode.
var errCorrupt = errors.New("window contents are corrupt")

// encodedRecord splits the first encoded record (abi.AppendRecord's
// layout) off b: its length, value and timestamp.
func encodedRecord(b []byte) (n int, value []byte, ts int64, err error) {
	field := func(off int) (int, error) {
		if off+4 > len(b) {
			return 0, errCorrupt
		}
		end := off + 4 + int(binary.LittleEndian.Uint32(b[off:]))
		if end > len(b) || end < off+4 {
			return 0, errCorrupt
		}
		return end, nil
	}
	off, err := field(0) // key
	if err != nil {
		return 0, nil, 0, err
	}
	vEnd, err := field(off)
	if err != nil {
		return 0, nil, 0, err
	}
	value = b[off+4 : vEnd]
	if vEnd+12 > len(b) {
		return 0, nil, 0, errCorrupt
	}
	ts = int64(binary.LittleEndian.Uint64(b[vEnd:]))
	headers := binary.LittleEndian.Uint32(b[vEnd+8:])
	off = vEnd + 12
	for range headers {
		for range 2 {
			if off, err = field(off); err != nil {
				return 0, nil, 0, err
			}
		}
	}
	return off, value, ts, nil
}

// number reads the evictor's field of a record value as a number.
func (e *evictor) number(value []byte) (float64, error) {
	raw, isString, err := operator.JSONField(value, e.field, e.scratch[:0])
	if err == nil && isString {
		err = errors.New("a string, not a number")
	}
	var v float64
	if err == nil {
		v, err = parseNumber(raw)
	}
	if err != nil {
		return 0, fmt.Errorf("evictor delta field %q: %w", e.field, err)
	}
	return v, nil
}

// evict removes the records the evictor does not keep from slot s, and
// with global windows sets the slot's bounds to those of the records kept.
func (e *evictor) evict(w *Operator, s *slot) error {
	var (
		count        int64
		latest, last = int64(math.MinInt64), 0.0
	)
	e.values = e.values[:0]
	for d := s.data; len(d) > 0; count++ {
		n, value, ts, err := encodedRecord(d)
		if err != nil {
			return err
		}
		latest = max(latest, ts)
		if e.kind == evictDelta {
			if last, err = e.number(value); err != nil {
				return err
			}
			e.values = append(e.values, last)
		}
		d = d[n:]
	}
	cutoff := operator.SubTime(latest, e.size)
	return e.retain(w, s, func(i, ts int64) bool {
		switch e.kind {
		case evictCount:
			return i >= count-e.max
		case evictTime:
			return ts > cutoff
		default:
			return math.Abs(e.values[i]-last) < e.threshold
		}
	})
}

// retain keeps the records of slot s for which keep (of the record's
// position and timestamp) is true, and with global windows sets the slot's
// bounds to those of the records kept.
func (e *evictor) retain(w *Operator, s *slot, keep func(i, ts int64) bool) error {
	e.kept = e.kept[:0]
	var kept, i int64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for d := s.data; len(d) > 0; i++ {
		n, _, ts, err := encodedRecord(d)
		if err != nil {
			return err
		}
		if keep(i, ts) {
			e.kept = append(e.kept, d[:n]...)
			kept++
			lo, hi = min(lo, ts), max(hi, operator.AddTime(ts, 1))
		}
		d = d[n:]
	}
	if kept != i {
		w.store.setData(s, e.kept)
		s.n = kept
	}
	if w.global() && kept > 0 {
		s.start, s.end = lo, hi
	}
	return nil
}
