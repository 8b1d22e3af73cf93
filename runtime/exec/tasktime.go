package exec

import (
	"context"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/connector"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/watermark"
)

// tickEvery is the most processing time that passes between two ticks of a
// running task's chain.
const tickEvery = 10 * time.Millisecond

// taskTime is a task's view of time. A gate task combines the watermarks of
// its input channels in a valve and tells its consumers when all its input
// is idle; a source task feeds its watermark generator split by split. Both
// tick their chain with the processing time at least every tickEvery.
//
// Goroutines: everything here belongs to the task goroutine except due,
// which a gate task's ticker goroutine sets (started by startTicker, ended
// by the function it returns, before the task goroutine leaves runGate).
type taskTime struct {
	valve *watermark.Valve
	// idle: the task told its consumers that it is idle.
	idle bool
	due  atomic.Bool
	// nextTick is when a source task ticks next (monoNanos).
	nextTick int64
	// gen is the watermark generator of a source chain, if any; grouped
	// and counts are its scratch for splitting batches by split.
	gen     *watermark.Generator
	grouped []abi.Record
	counts  []int
	// scripted is the task's clock when the job's test stream moves
	// processing time, else nil: the wall clock (scriptedtime.go).
	scripted *scriptedClock
}

// startTicker starts the goroutine that marks a tick due every tickEvery and
// wakes the gate, so that a task waiting for input still ticks. It returns
// the function that stops it.
func (t *Task) startTicker() (stop func()) {
	t.time.valve = watermark.NewValve(t.gate.NumChannels())
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(tickEvery)
		defer tk.Stop()
		for {
			select {
			case <-tk.C:
				t.time.due.Store(true)
				t.gate.Wakeup()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// gateTick ticks the chain if the ticker marked a tick due.
func (t *Task) gateTick(ctx context.Context) error {
	if !t.time.due.Load() {
		return nil
	}
	t.time.due.Store(false)
	return t.chain.Tick(ctx, t.now())
}

// sourceTick ticks the chain if tickEvery has passed since the last tick.
func (t *Task) sourceTick(ctx context.Context) error {
	now := MonoNanos()
	if now < t.time.nextTick {
		return nil
	}
	t.time.nextTick = now + int64(tickEvery)
	return t.chain.Tick(ctx, t.now())
}

// gateEvent handles an event of an input channel for event time: a
// watermark, an idleness change, or the channel's end (its watermark becomes
// MaxWatermark). When the combined watermark rises the chain advances; when
// every channel is idle (or one is active again) the task's consumers are
// told. Any other event (a barrier) is an error: Task.event does not send it
// here.
func (t *Task) gateEvent(ctx context.Context, channel int, ev exchange.Event) error {
	var wm int64
	var advanced bool
	switch e := ev.(type) {
	case exchange.Watermark:
		wm, advanced = t.time.valve.Update(channel, e.Time)
	case exchange.Idle:
		wm, advanced = t.time.valve.SetIdle(channel, e.Idle)
	case exchange.EndOfPartition:
		wm, advanced = t.time.valve.Update(channel, watermark.MaxWatermark)
	default:
		return unhandledEvent("event time", channel, ev)
	}
	idle := t.time.valve.Idle()
	if !idle {
		if err := t.announceIdle(ctx, false); err != nil {
			return err
		}
	}
	if advanced {
		if err := t.chain.Advance(ctx, wm); err != nil {
			return err
		}
	}
	if idle {
		return t.announceIdle(ctx, true)
	}
	return nil
}

// endGate runs at the end of all input: every channel has ended, so event
// time is over (a gate without channels gets there too).
func (t *Task) endGate(ctx context.Context) error {
	if t.time.valve.Current() == watermark.MaxWatermark {
		return nil
	}
	return t.chain.Advance(ctx, watermark.MaxWatermark)
}

// announceIdle tells every consumer of the task that its output is idle or
// active again, when that changes.
func (t *Task) announceIdle(ctx context.Context, idle bool) error {
	if t.time.idle == idle {
		return nil
	}
	t.time.idle = idle
	for _, w := range t.writers {
		if err := w.BroadcastEvent(ctx, exchange.Idle{Idle: idle}); err != nil {
			return err
		}
	}
	return nil
}

// processSource passes a fetched batch to the chain. When the chain
// generates watermarks per split, the batch goes split by split (each
// split's records in their order) and the generator is told which split it
// sees.
func (t *Task) processSource(ctx context.Context, b *abi.Batch) error {
	gen := t.time.gen
	ss, ok := t.source.(connector.SplitSource)
	if gen == nil || !ok || ss.Splits() <= 1 {
		return t.chain.Process(ctx, b.Records)
	}
	splits := ss.LastSplits()
	n := ss.Splits()
	if cap(t.time.counts) < n+1 {
		t.time.counts = make([]int, n+1)
	}
	counts := t.time.counts[:n+1]
	clear(counts)
	for _, s := range splits {
		counts[s+1]++
	}
	for i := 1; i <= n; i++ {
		counts[i] += counts[i-1]
	}
	if cap(t.time.grouped) < len(b.Records) {
		t.time.grouped = make([]abi.Record, len(b.Records))
	}
	grouped := t.time.grouped[:len(b.Records)]
	// counts[s] is where split s starts; filling moves it to its end.
	for i, s := range splits {
		grouped[counts[s]] = b.Records[i]
		counts[s]++
	}
	start := 0
	for s := 0; s < n; s++ {
		end := counts[s]
		if end > start {
			gen.Split = s
			if err := t.chain.Process(ctx, grouped[start:end]); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// VertexWatermark is the least watermark of a vertex's subtasks, or nil
// while one of them has none.
func VertexWatermark(cs []*Counters) *int64 {
	var least int64
	for i, c := range cs {
		w := c.Watermark.Load()
		if w == abi.NoWatermark {
			return nil
		}
		if i == 0 || w < least {
			least = w
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return &least
}
