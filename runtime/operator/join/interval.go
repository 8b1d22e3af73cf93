package join

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// joinRecOverhead is the bytes a buffered join record costs beyond its key
// and value, counted against the operator's budget.
const joinRecOverhead = 48

// joinRec is a buffered record of one join side.
type joinRec struct {
	ts    int64
	value []byte
}

// Interval joins each left record at time t with the right records of
// the same key whose time lies in [t+lower, t+upper], in event time. Each
// side's records stay buffered until the watermark passes the last time a
// record of the other side could still match them, so its state is bounded
// by the rate of input times the interval (plus the allowed lateness). A
// record is late when its time plus the allowed lateness is below the
// watermark (Flink's IntervalJoinOperator: timestamp < watermark); late
// records go to the late output instead of being joined. Times computed from
// a record's (bounds, expiries) are capped to the int64 range.
type Interval struct {
	vertex string
	plan   *plan.Join
	inputs *operator.Inputs
	// sides buffers the left (0) and right (1) records.
	sides [2]joinSide
	// slabs are where each side's buffered records are copied (keep).
	slabs [2][]byte
	// matched are the other side's records a record meets, for the moment
	// add joins them.
	matched []joinRec
	wm      int64
	used    int64
	limit   int64
	// LateCount counts the records too late to join.
	LateCount *atomic.Int64
	out       *operator.Out
	Late      operator.Stage
	lateRecs  []abi.Record
	scratch   []byte
	// fn is the join function, nil for the built-in pairs.
	fn *intervalCall
}

// Config is what an interval join subtask is made of.
type Config struct {
	Vertex string
	Plan   *plan.Join
	// Inputs tells which input a batch comes from.
	Inputs *operator.Inputs
	// Limit bounds the bytes of the buffered records (the job's keyed
	// state budget).
	Limit int64
	// BatchSize bounds the pairs passed on at once and the groups of one
	// call.
	BatchSize int
	Policy    *operator.ErrorPolicy
	// Next receives the pairs; Late the records too late to join, which are
	// dropped and counted in LateCount when Late is nil.
	Next      operator.Stage
	Late      operator.Stage
	LateCount *atomic.Int64
	// Sides are the named side outputs the join function writes; nil
	// without.
	Sides *operator.SideOutputs
	// Fn is the join (or co_group) function; nil emits built-in pairs.
	Fn *operator.GroupCall
}

// New makes an interval join subtask.
func New(cfg Config) *Interval {
	out := &operator.Out{Max: cfg.BatchSize, Next: cfg.Next, Sides: cfg.Sides}
	j := newIntervalJoin(cfg.Vertex, cfg.Plan, cfg.Inputs, cfg.Limit, cfg.LateCount, out, cfg.Late)
	if cfg.Fn != nil {
		kind := abi.KindJoin
		if cfg.Plan.CoGroup {
			kind = abi.KindCoGroup
		}
		call := &operator.GroupRunner{Kind: kind, MaxGroups: cfg.BatchSize, Policy: cfg.Policy, Out: out, Call: *cfg.Fn}
		j.fn = &intervalCall{call: call, policy: cfg.Policy}
	}
	return j
}

func newIntervalJoin(vertex string, jp *plan.Join, inputs *operator.Inputs, limit int64, lateCount *atomic.Int64, out *operator.Out, late operator.Stage) *Interval {
	return &Interval{
		vertex: vertex, plan: jp, inputs: inputs, limit: limit, LateCount: lateCount, out: out, Late: late,
		wm: abi.NoWatermark,
	}
}

// expiry is the watermark at which a record of a side at time ts can no
// longer meet a record of the other side that is not late: the first
// watermark above the latest time of a match plus the allowed lateness. A
// record whose expiry would pass the int64 range expires at the end of
// input.
func (j *Interval) expiry(side int, ts int64) int64 {
	latest := operator.AddTime(ts, j.plan.Upper)
	if side == 1 {
		latest = operator.SubTime(ts, j.plan.Lower)
	}
	return operator.AddTime(operator.AddTime(latest, j.plan.Lateness), 1)
}

// isLate reports whether a record at ts is too late to join: below the
// watermark by more than the allowed lateness.
func (j *Interval) isLate(ts int64) bool {
	return operator.AddTime(ts, j.plan.Lateness) < j.wm
}

func (j *Interval) Process(ctx context.Context, recs []abi.Record) error {
	side := 0
	if j.inputs.Right {
		side = 1
	}
	for i := range recs {
		rec := &recs[i]
		if j.isLate(rec.Timestamp) {
			j.LateCount.Add(1)
			if j.Late != nil {
				j.lateRecs = append(j.lateRecs, *rec)
			}
			continue
		}
		if err := j.add(side, rec); err != nil {
			return err
		}
		if err := j.out.FlushIfFull(ctx); err != nil {
			return err
		}
	}
	if j.fn != nil {
		if err := j.fn.run(ctx, j.wm, j.out); err != nil {
			return err
		}
	}
	if err := j.out.Flush(ctx); err != nil {
		return err
	}
	if len(j.lateRecs) == 0 {
		return nil
	}
	err := j.Late.Process(ctx, j.lateRecs)
	clear(j.lateRecs)
	j.lateRecs = j.lateRecs[:0]
	return err
}

// add joins a record with the other side's buffered records and buffers it
// while it can still match.
func (j *Interval) add(side int, rec *abi.Record) error {
	lo, hi := operator.AddTime(rec.Timestamp, j.plan.Lower), operator.AddTime(rec.Timestamp, j.plan.Upper)
	if side == 1 {
		lo, hi = operator.SubTime(rec.Timestamp, j.plan.Upper), operator.SubTime(rec.Timestamp, j.plan.Lower)
	}
	other := &j.sides[1-side]
	j.matched = other.matches(j.matched[:0], rec.Key, lo, hi)
	begun := false
	for _, o := range j.matched {
		switch {
		case j.fn != nil && side == 0:
			if !begun {
				j.fn.begin(rec.Key, rec)
				begun = true
			}
			j.fn.right(&abi.Record{Key: rec.Key, Value: o.value, Timestamp: o.ts})
		case j.fn != nil:
			j.fn.begin(rec.Key, &abi.Record{Key: rec.Key, Value: o.value, Timestamp: o.ts})
			j.fn.right(rec)
		case side == 0:
			j.emit(rec.Key, rec.Value, o.value, max(rec.Timestamp, o.ts))
		default:
			j.emit(rec.Key, o.value, rec.Value, max(rec.Timestamp, o.ts))
		}
	}
	if len(j.matched) > 0 {
		clear(j.matched)
	}
	if other.costly() {
		j.index(1 - side)
	}
	return j.buffer(side, rec.Key, rec.Timestamp, rec.Value)
}

// buffer keeps a copy of a side's record while it can still match, within
// the budget.
func (j *Interval) buffer(side int, key []byte, ts int64, value []byte) error {
	exp := j.expiry(side, ts)
	if exp <= j.wm {
		return nil
	}
	j.used += int64(len(key) + len(value) + joinRecOverhead)
	if j.used > j.limit {
		return fmt.Errorf("operator[%s]: join state exceeds its budget of %d bytes (record key %q)", j.vertex, j.limit, key)
	}
	s := &j.sides[side]
	if !s.indexed() {
		s.appendLog(ts, j.keep(side, key, value), len(key))
		if s.costly() {
			j.index(side)
		}
		return nil
	}
	s.bufferByKey(key, ts, j.keep(side, nil, value), exp)
	return nil
}

// index moves a side's log into an index by key, in the log's order.
func (j *Interval) index(side int) {
	s := &j.sides[side]
	s.keys = map[string]*joinKey{}
	for i := s.head; i < len(s.log); i++ {
		r := &s.log[i]
		s.bufferByKey(r.key(), r.ts, r.value(), j.expiry(side, r.ts))
	}
	s.log, s.head = nil, 0
}

// slabBytes is the size of a slab of buffered values, and slabValueBytes
// the largest value copied into one; a larger value is a copy of its own.
const (
	slabBytes      = 32 << 10
	slabValueBytes = slabBytes / 8
)

// keep returns a copy of a buffered record's key (in a log) and value, back
// to back. Copies go back to back into the side's slab, which saves an
// allocation per record: a slab is garbage once every record in it
// expired, and as a side's records expire in the order of their times, that
// is soon after its last record's expiry, unless a record far out of order
// came among them.
func (j *Interval) keep(side int, key, value []byte) []byte {
	n := len(key) + len(value)
	if n > slabValueBytes {
		return append(append(make([]byte, 0, n), key...), value...)
	}
	s := j.slabs[side]
	if cap(s)-len(s) < n {
		s = make([]byte, 0, slabBytes)
	}
	m := len(s)
	s = append(append(s, key...), value...)
	j.slabs[side] = s
	return s[m:len(s):len(s)]
}

// emit outputs a matched pair: {"key": "...", "left": <left>, "right": <right>}.
func (j *Interval) emit(key, left, right []byte, ts int64) {
	b := append(j.scratch[:0], `{"key":`...)
	b = operator.AppendJSONString(b, key)
	b = append(b, `,"left":`...)
	b = append(b, left...)
	b = append(b, `,"right":`...)
	b = append(b, right...)
	b = append(b, '}')
	j.scratch = b
	j.out.Emit(key, b, ts, nil)
}

// prune drops the buffered records that expired at the watermark: for each
// expiry due, the expired records of its key.
func (j *Interval) prune() {
	for side := range j.sides {
		s := &j.sides[side]
		if !s.indexed() {
			// A log is in time order, and a record's expiry does not
			// decrease with its time.
			for ; s.head < len(s.log) && j.expiry(side, s.log[s.head].ts) <= j.wm; s.head++ {
				j.used -= int64(len(s.log[s.head].kv) + joinRecOverhead)
				s.log[s.head] = logRec{}
			}
			s.compact()
			continue
		}
		for {
			x, ok := s.expiries.pop(j.wm)
			if !ok {
				break
			}
			j.pruneKey(side, x.k)
		}
	}
}

func (j *Interval) pruneKey(side int, k *joinKey) {
	kept := k.recs[:0]
	for _, r := range k.recs {
		if j.expiry(side, r.ts) > j.wm {
			kept = append(kept, r)
			continue
		}
		j.used -= int64(len(k.key) + len(r.value) + joinRecOverhead)
	}
	clear(k.recs[len(kept):])
	k.recs = kept
	if keys := j.sides[side].keys; len(kept) == 0 && keys[k.key] == k {
		delete(keys, k.key)
	}
}

func (j *Interval) Advance(ctx context.Context, wm int64) error {
	if wm > j.wm {
		j.wm = wm
		j.prune()
	}
	if j.Late != nil {
		if err := j.Late.Advance(ctx, wm); err != nil {
			return err
		}
	}
	if err := j.out.Sides.Advance(ctx, wm); err != nil {
		return err
	}
	return j.out.Next.Advance(ctx, wm)
}

func (j *Interval) Tick(ctx context.Context, now int64) error {
	if j.Late != nil {
		if err := j.Late.Tick(ctx, now); err != nil {
			return err
		}
	}
	if err := j.out.Sides.Tick(ctx, now); err != nil {
		return err
	}
	return j.out.Next.Tick(ctx, now)
}

func (j *Interval) Finish(ctx context.Context) error {
	if err := j.out.Flush(ctx); err != nil {
		return err
	}
	if j.Late != nil {
		if err := j.Late.Finish(ctx); err != nil {
			return err
		}
	}
	if err := j.out.Sides.Finish(ctx); err != nil {
		return err
	}
	return j.out.Next.Finish(ctx)
}

func (j *Interval) Close(ctx context.Context) error {
	errs := []error{j.out.Next.Close(ctx), j.out.Sides.Close(ctx)}
	if j.fn != nil {
		errs = append(errs, j.fn.call.Call.Guest.Close(ctx))
	}
	if j.Late != nil {
		errs = append(errs, j.Late.Close(ctx))
	}
	return errors.Join(errs...)
}
