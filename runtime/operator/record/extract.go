package record

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// extract is the host-native operator `extract: {field}`: each record's
// value becomes the value of a top-level member of its JSON object, as
// written (a view of the input, so nothing is copied). A record whose
// member is null produces nothing, as a flat_map that emits nothing; one
// without the member, or whose value is not a JSON object, goes through the
// error policy.
type extract struct {
	field  string
	policy *operator.ErrorPolicy
	next   operator.Stage

	out []abi.Record
}

// Extract makes the extract operator over field, followed by next.
func Extract(field string, policy *operator.ErrorPolicy, next operator.Stage) operator.Stage {
	return &extract{field: field, policy: policy, next: next}
}

func (x *extract) Process(ctx context.Context, recs []abi.Record) error {
	x.out = x.out[:0]
	for i := range recs {
		// No scratch: it unescapes only keys with escapes, which are rare.
		v, err := operator.JSONMember(recs[i].Value, x.field, nil)
		if err != nil {
			if err := x.policy.RecordFailed(ctx, &recs[i], fmt.Errorf("extract.field %q: %w", x.field, err)); err != nil {
				return err
			}
			continue
		}
		if string(v) == "null" {
			continue
		}
		rec := recs[i]
		rec.Value = v
		x.out = append(x.out, rec)
	}
	return x.next.Process(ctx, x.out)
}

func (x *extract) Advance(ctx context.Context, wm int64) error { return x.next.Advance(ctx, wm) }
func (x *extract) Tick(ctx context.Context, now int64) error   { return x.next.Tick(ctx, now) }
func (x *extract) Finish(ctx context.Context) error            { return x.next.Finish(ctx) }
func (x *extract) Close(ctx context.Context) error             { return x.next.Close(ctx) }
