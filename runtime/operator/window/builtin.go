package window

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// Built-in window aggregates.
const (
	builtinCount = "count"
	builtinSum   = "sum"
	builtinMin   = "min"
	builtinMax   = "max"
	builtinAvg   = "avg"
)

// builtinAcc is the accumulator of every built-in aggregate: count, sum,
// min and max of the field's numbers (float64).
type builtinAcc struct {
	count    int64
	sum      float64
	min, max float64
}

func (a *builtinAcc) add(v float64) {
	if a.count == 0 || v < a.min {
		a.min = v
	}
	if a.count == 0 || v > a.max {
		a.max = v
	}
	a.count++
	a.sum += v
}

func (a *builtinAcc) merge(b *builtinAcc) {
	if b.count == 0 {
		return
	}
	if a.count == 0 || b.min < a.min {
		a.min = b.min
	}
	if a.count == 0 || b.max > a.max {
		a.max = b.max
	}
	a.count += b.count
	a.sum += b.sum
}

// builtinFunc is a host-native window aggregate (count, sum, min, max, avg)
// over a JSON number field: no Wasm, no copies of records.
type builtinFunc struct {
	name    string
	field   string
	policy  *operator.ErrorPolicy
	out     *operator.Out
	scratch []byte
	acc     builtinAcc
	value   []byte
}

func (f *builtinFunc) add(ctx context.Context, _ *keyState, s *slot, rec *abi.Record) error {
	s.n++
	if f.name == builtinCount {
		s.agg.count++
		return nil
	}
	raw, isString, err := operator.JSONField(rec.Value, f.field, f.scratch[:0])
	if err == nil && isString {
		err = errors.New("a string, not a number")
	}
	var v float64
	if err == nil {
		v, err = parseNumber(raw)
	}
	if err != nil {
		s.n--
		return f.policy.RecordFailed(ctx, rec, fmt.Errorf("aggregate %s field %q: %w", f.name, f.field, err))
	}
	s.agg.add(v)
	return nil
}

// parseNumber reads a JSON number; integers without allocating.
func parseNumber(raw []byte) (float64, error) {
	if n, ok := operator.ParseInt(raw); ok {
		return float64(n), nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", raw)
	}
	return v, nil
}

func (f *builtinFunc) flush(context.Context) error { return nil }

func (f *builtinFunc) merge(_ context.Context, ms []slotMerge) error {
	for _, m := range ms {
		for _, src := range m.from {
			m.into.agg.merge(&src.agg)
			m.into.n += src.n
		}
	}
	return nil
}

func (f *builtinFunc) fire(ctx context.Context, fs []firing) error {
	for i := range fs {
		fr := &fs[i]
		f.acc = builtinAcc{}
		for _, s := range fr.slots {
			f.acc.merge(&s.agg)
		}
		if f.acc.count == 0 {
			continue
		}
		f.out.EmitBuiltin(fr.key, fr.start, fr.end, f.result(&f.acc))
		if err := f.out.FlushIfFull(ctx); err != nil {
			return err
		}
	}
	return nil
}

// result formats the aggregate's value.
func (f *builtinFunc) result(a *builtinAcc) []byte {
	b := f.value[:0]
	switch f.name {
	case builtinCount:
		b = strconv.AppendInt(b, a.count, 10)
	case builtinSum:
		b = strconv.AppendFloat(b, a.sum, 'f', -1, 64)
	case builtinMin:
		b = strconv.AppendFloat(b, a.min, 'f', -1, 64)
	case builtinMax:
		b = strconv.AppendFloat(b, a.max, 'f', -1, 64)
	case builtinAvg:
		b = strconv.AppendFloat(b, a.sum/float64(a.count), 'f', -1, 64)
	}
	f.value = b
	return b
}

func (f *builtinFunc) close(context.Context) error { return nil }
