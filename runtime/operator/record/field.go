package record

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// fieldExtract is a host-native record function over a top-level JSON field
// of the value: key_by.field (the field's value becomes the key) or
// timestamp.field (milliseconds or RFC 3339 become the timestamp). Records
// whose field is missing or unreadable go through the error policy.
type fieldExtract struct {
	field     string
	timestamp bool
	policy    *operator.ErrorPolicy
	next      operator.Stage

	out   []abi.Record
	arena []byte
}

// KeyField makes a top-level JSON field of the value each record's key:
// key_by.field.
func KeyField(field string, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	return &fieldExtract{field: field, policy: policy, next: next}
}

// TimestampField makes a top-level JSON field of the value (milliseconds, or
// RFC 3339) each record's timestamp: timestamp.field.
func TimestampField(field string, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	return &fieldExtract{field: field, timestamp: true, policy: policy, next: next}
}

func (f *fieldExtract) Process(ctx context.Context, recs []abi.Record) error {
	f.out = f.out[:0]
	f.arena = f.arena[:0]
	for i := range recs {
		rec := recs[i]
		v, isString, err := operator.JSONField(rec.Value, f.field, f.arena[len(f.arena):])
		if err == nil && f.timestamp {
			rec.Timestamp, err = operator.ParseTimestamp(v, isString)
		} else if err == nil {
			rec.Key = f.keep(v)
		}
		if err != nil {
			what := "key_by"
			if f.timestamp {
				what = "timestamp"
			}
			if err := f.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("%s.field %q: %w", what, f.field, err)); err != nil {
				return err
			}
			continue
		}
		f.out = append(f.out, rec)
	}
	return f.next.Process(ctx, f.out)
}

// keep returns v itself when it is a view of the record, or a stable copy
// when jsonField unescaped it into the arena's spare capacity.
func (f *fieldExtract) keep(v []byte) []byte {
	spare := f.arena[len(f.arena):cap(f.arena)]
	if len(v) == 0 || len(spare) == 0 || &v[0] != &spare[0] {
		return v
	}
	if len(v) > len(spare) {
		// jsonField grew past the arena; v already lives in its own array.
		return v
	}
	f.arena = f.arena[:len(f.arena)+len(v)]
	kept := f.arena[len(f.arena)-len(v) : len(f.arena) : len(f.arena)]
	if cap(f.arena)-len(f.arena) < 256 {
		// Start a new array instead of growing this one, which earlier
		// records still point into.
		f.arena = make([]byte, 0, 16<<10)
	}
	return kept
}

func (f *fieldExtract) Advance(ctx context.Context, wm int64) error { return f.next.Advance(ctx, wm) }
func (f *fieldExtract) Tick(ctx context.Context, now int64) error   { return f.next.Tick(ctx, now) }
func (f *fieldExtract) Finish(ctx context.Context) error            { return f.next.Finish(ctx) }
func (f *fieldExtract) Close(ctx context.Context) error             { return f.next.Close(ctx) }
