package replay

import (
	"context"
	"fmt"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/host"
	"wasmstream.io/platform/runtime/operator"
)

// version is one operator of a replay (the recorded module's, or the
// other module's): it hears what its calls do and collects its outputs.
type version struct {
	name   string
	states []abi.State
	op     operator.Stage
	// report takes each event of the version.
	report func(Event) error
	// cause is what the operator is doing: "record <seq>" while it
	// processes an input, "watermark <wm>" while it advances.
	cause string
	// outputs are its outputs of the current step (an input, a
	// watermark), kept for the diff when keep is set; count is all its
	// outputs.
	outputs []Event
	keep    bool
	count   int
	// fired are the timers of the last call when it was an on_timer
	// call: the outputs passed on after it answer them.
	fired []firedTimer
}

// firedTimer is a timer an on_timer call fired.
type firedTimer struct {
	domain abi.TimeDomain
	ts     int64
}

// emit reports an event of the version.
func (v *version) emit(e Event) error {
	e.Version = v.name
	if e.Event == EventOutput {
		v.count++
		if v.keep {
			v.outputs = append(v.outputs, e)
		}
	}
	return v.report(e)
}

// domainName names a time domain in events.
func domainName(d abi.TimeDomain) string {
	if d == abi.ProcessingTime {
		return "processing_time"
	}
	return "event_time"
}

// timerCause names a timer as the cause of what its on_timer call does.
func timerCause(d abi.TimeDomain, ts int64) string {
	return fmt.Sprintf("timer %s %d", domainName(d), ts)
}

// tracedGuest runs a keyed function's calls with an Env that reports the
// state and timer changes they make; for on_timer calls it reports each
// timer fired first.
type tracedGuest struct {
	operator.KeyedCaller
	v       *version
	onTimer bool
	env     tracedEnv
	reader  abi.GroupReader
	group   abi.GroupHead
}

func (g *tracedGuest) CallWith(ctx context.Context, fn int, frame []byte, env host.Env) ([]byte, error) {
	g.env.Env, g.env.v = env, g.v
	g.env.timers, g.env.cur = g.env.timers[:0], -1
	g.v.fired = g.v.fired[:0]
	if g.onTimer {
		if err := g.reader.Reset(frame); err != nil {
			return nil, err
		}
		for g.reader.NextGroup(&g.group) {
			ts := g.group.TimerTime
			g.env.timers = append(g.env.timers, timerCause(g.group.TimerDomain, ts))
			g.v.fired = append(g.v.fired, firedTimer{g.group.TimerDomain, ts})
			if err := g.v.emit(Event{Event: EventTimer, Op: "fire", Domain: domainName(g.group.TimerDomain), Timestamp: &ts,
				Key: Bytes(g.group.Key), Answers: g.v.cause}); err != nil {
				return nil, err
			}
		}
	}
	return g.KeyedCaller.CallWith(ctx, fn, frame, &g.env)
}

// tracedEnv reports each change a call makes to the key's state and
// timers, then makes it.
type tracedEnv struct {
	host.Env
	v *version
	// timers are the causes of an on_timer call's groups; cur is the
	// group entered.
	timers []string
	cur    int
}

func (e *tracedEnv) Enter(g uint32) error {
	e.cur = int(g)
	return e.Env.Enter(g)
}

// cause is what the current group answers: the timer of an on_timer
// group, the version's cause otherwise.
func (e *tracedEnv) cause() string {
	if e.cur >= 0 && e.cur < len(e.timers) {
		return e.timers[e.cur]
	}
	return e.v.cause
}

func (e *tracedEnv) stateName(s uint32) string {
	if int(s) < len(e.v.states) {
		return e.v.states[s].Name
	}
	return fmt.Sprintf("#%d", s)
}

func (e *tracedEnv) state(op string, s uint32, mapKey, value []byte) error {
	return e.v.emit(Event{Event: EventState, Op: op, State: e.stateName(s), MapKey: Bytes(mapKey), Value: Bytes(value), Answers: e.cause()})
}

func (e *tracedEnv) ValueSet(s uint32, v []byte) error {
	if err := e.state("set", s, nil, v); err != nil {
		return err
	}
	return e.Env.ValueSet(s, v)
}

func (e *tracedEnv) Clear(s uint32) error {
	if err := e.state("clear", s, nil, nil); err != nil {
		return err
	}
	return e.Env.Clear(s)
}

func (e *tracedEnv) ListAppend(s uint32, v []byte) error {
	if err := e.state("append", s, nil, v); err != nil {
		return err
	}
	return e.Env.ListAppend(s, v)
}

func (e *tracedEnv) MapPut(s uint32, k, v []byte) error {
	if err := e.state("put", s, k, v); err != nil {
		return err
	}
	return e.Env.MapPut(s, k, v)
}

func (e *tracedEnv) MapRemove(s uint32, k []byte) error {
	if err := e.state("remove", s, k, nil); err != nil {
		return err
	}
	return e.Env.MapRemove(s, k)
}

func (e *tracedEnv) timer(op string, d abi.TimeDomain, ts int64) error {
	return e.v.emit(Event{Event: EventTimer, Op: op, Domain: domainName(d), Timestamp: &ts, Answers: e.cause()})
}

func (e *tracedEnv) RegisterTimer(d abi.TimeDomain, ts int64) error {
	if err := e.timer("register", d, ts); err != nil {
		return err
	}
	return e.Env.RegisterTimer(d, ts)
}

func (e *tracedEnv) DeleteTimer(d abi.TimeDomain, ts int64) error {
	if err := e.timer("delete", d, ts); err != nil {
		return err
	}
	return e.Env.DeleteTimer(d, ts)
}

// collector is the stage after a version's operator: it reports each
// output with what it answers. Told by a process operator (as an
// operator.Tracer) which input each output answers, it names timers;
// other outputs answer the version's cause. Only keep's outputs (the key's,
// for a window whose key group holds other keys) are reported.
type collector struct {
	v       *version
	keep    func(*abi.Record) bool
	answers []*abi.Record
}

func (c *collector) Answers(inputs []*abi.Record) { c.answers = inputs }

func (c *collector) Process(_ context.Context, recs []abi.Record) error {
	for i := range recs {
		r := &recs[i]
		if c.keep != nil && !c.keep(r) {
			continue
		}
		cause := c.cause(i)
		ts := r.Timestamp
		e := Event{Event: EventOutput, Key: Bytes(clone(r.Key)), Value: Bytes(clone(r.Value)), Timestamp: &ts, Answers: cause}
		for _, h := range r.Headers {
			e.Headers = append(e.Headers, Header{Name: string(h.Name), Value: Bytes(clone(h.Value))})
		}
		if err := c.v.emit(e); err != nil {
			return err
		}
	}
	c.answers = nil
	c.v.fired = c.v.fired[:0]
	return nil
}

// cause is what output i of the batch answers: the timer it answers after
// an on_timer call, the version's cause otherwise.
func (c *collector) cause(i int) string {
	if len(c.v.fired) == 0 || i >= len(c.answers) || c.answers[i] == nil {
		return c.v.cause
	}
	ts := c.answers[i].Timestamp
	for _, t := range c.v.fired {
		if t.ts == ts {
			return timerCause(t.domain, ts)
		}
	}
	return c.v.cause
}

func (c *collector) Advance(context.Context, int64) error { return nil }
func (c *collector) Tick(context.Context, int64) error    { return nil }
func (c *collector) Finish(context.Context) error         { return nil }
func (c *collector) Close(context.Context) error          { return nil }

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
