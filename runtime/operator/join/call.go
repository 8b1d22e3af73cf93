package join

import (
	"context"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
)

// joinGroup is a two-sided group of an interval join's function call: one
// left record and the right records it matched when the later of them
// arrived. Its key and records are encoded in the join's arena.
type joinGroup struct {
	key, left, right []byte
	rights           uint32
	// ts is the latest timestamp of the group's records, which the
	// function's results inherit.
	ts int64
}

// intervalCall gathers the matches of an interval join with a join function
// during a batch and calls the function once for all of them at its end.
type intervalCall struct {
	call   *operator.GroupRunner
	policy *operator.ErrorPolicy
	arena  []byte
	// spans are the groups' key, left and right bounds in arena, as
	// offsets, so that the arena may grow.
	spans  []joinSpan
	groups []joinGroup
	head   abi.GroupHead
}

// joinSpan locates a group in the arena: key [k0, l0), left [l0, r0),
// right [r0, end).
type joinSpan struct {
	k0, l0, r0, end int
	rights          uint32
	ts              int64
}

// begin starts a group for key with its left record.
func (c *intervalCall) begin(key []byte, left *abi.Record) {
	k0 := len(c.arena)
	c.arena = append(c.arena, key...)
	l0 := len(c.arena)
	c.arena = abi.AppendRecord(c.arena, left)
	c.spans = append(c.spans, joinSpan{k0: k0, l0: l0, r0: len(c.arena), end: len(c.arena), ts: left.Timestamp})
}

// right adds a right record to the group begun last.
func (c *intervalCall) right(r *abi.Record) {
	c.arena = abi.AppendRecord(c.arena, r)
	s := &c.spans[len(c.spans)-1]
	s.end = len(c.arena)
	s.rights++
	s.ts = max(s.ts, r.Timestamp)
}

// run calls the function over the gathered groups and forgets them.
func (c *intervalCall) run(ctx context.Context, wm int64, out *operator.Out) error {
	if len(c.spans) == 0 {
		return nil
	}
	c.groups = c.groups[:0]
	for _, s := range c.spans {
		c.groups = append(c.groups, joinGroup{key: c.arena[s.k0:s.l0], left: c.arena[s.l0:s.r0], right: c.arena[s.r0:s.end], rights: s.rights, ts: s.ts})
	}
	gc := &c.call.Call
	err := c.call.Run(ctx, abi.OpNone, wm, len(c.groups), operator.GroupHandlers{
		Add: func(i int) {
			g := &c.groups[i]
			c.head = abi.GroupHead{Flags: abi.GroupTwoSided, Key: g.key}
			gc.BeginEncoded(&c.head, 1)
			gc.Frame = append(gc.Frame, g.left...)
			gc.Frame = abi.AppendSide(gc.Frame, g.rights)
			gc.Records += g.rights
			gc.Frame = append(gc.Frame, g.right...)
		},
		Record: func(i int, e *abi.Entry) error {
			out.EmitEntry(e, c.groups[i].key, c.groups[i].ts+1)
			return nil
		},
		Failed: func(i int, err error) error {
			g := &c.groups[i]
			return c.policy.RecordFailed(ctx, &abi.Record{Key: g.key, Timestamp: g.ts}, err)
		},
	})
	clear(c.groups)
	c.arena, c.spans = c.arena[:0], c.spans[:0]
	return err
}
