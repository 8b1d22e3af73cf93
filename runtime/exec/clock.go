package exec

import (
	"context"
	"sync/atomic"
	"time"

	"wasmstream.io/platform/abi"
	"wasmstream.io/platform/runtime/exchange"
	"wasmstream.io/platform/runtime/operator"
	"wasmstream.io/platform/runtime/plan"
)

// clockEpoch anchors monoNanos on the monotonic clock.
var clockEpoch = time.Now()

// MonoNanos is a monotonic reading in nanoseconds.
func MonoNanos() int64 { return int64(time.Since(clockEpoch)) }

// busyClock accumulates the time a task goroutine spends inside one vertex's
// stage, including a call in progress, so that a long call shows in samples
// taken during it. The task goroutine writes it once per batch; samplers
// read it from any goroutine.
type busyClock struct {
	total atomic.Int64
	// since is when the call in progress began; 0 when none is.
	since atomic.Int64
}

func (c *busyClock) enter() { c.since.Store(MonoNanos()) }

// leave ends the call. It clears since before adding to total, so that a
// concurrent nanos may miss the call for a moment but never counts it twice.
func (c *busyClock) leave() {
	d := MonoNanos() - c.since.Load()
	c.since.Store(0)
	c.total.Add(d)
}

// nanos is the time spent so far. It reads total before since: see leave.
func (c *busyClock) nanos(now int64) int64 {
	n := c.total.Load()
	if s := c.since.Load(); s != 0 && now > s {
		n += now - s
	}
	return n
}

// inMeter is the entry of a vertex's stage: it counts the records coming in
// and times the stage, which includes the chained stages it calls and its
// waits for output buffers.
type inMeter struct {
	c    *Counters
	next operator.Stage
}

func (m *inMeter) Process(ctx context.Context, recs []abi.Record) error {
	m.c.In.Add(int64(len(recs)))
	m.c.busy.enter()
	err := m.next.Process(ctx, recs)
	m.c.busy.leave()
	return err
}

func (m *inMeter) Finish(ctx context.Context) error {
	m.c.busy.enter()
	err := m.next.Finish(ctx)
	m.c.busy.leave()
	return err
}

func (m *inMeter) Advance(ctx context.Context, wm int64) error {
	m.c.busy.enter()
	err := m.next.Advance(ctx, wm)
	m.c.busy.leave()
	return err
}

func (m *inMeter) Tick(ctx context.Context, now int64) error {
	m.c.busy.enter()
	err := m.next.Tick(ctx, now)
	m.c.busy.leave()
	return err
}

func (m *inMeter) Close(ctx context.Context) error { return m.next.Close(ctx) }

// vertexClock finds the time one vertex of a chain spends on its own work:
// its stage's time less the time of the chained stages it calls and its
// waits for output buffers.
type vertexClock struct {
	id      string
	own     *busyClock
	chained []*busyClock
	writers []*exchange.Writer
}

// nanos is the vertex's own time so far.
func (c *vertexClock) nanos(now int64) int64 {
	n := c.own.nanos(now)
	for _, ch := range c.chained {
		n -= ch.nanos(now)
	}
	for _, w := range c.writers {
		n -= w.Stats().BackpressuredNanos
	}
	return max(n, 0)
}

// taskStats are the figures of one task that its goroutine writes and the
// backpressure sampler and the metrics collector read. Everything set at
// build time (vertices, pools) is read-only once the task runs.
type taskStats struct {
	// started and ended are monoNanos readings; 0 before the task starts
	// and while it runs.
	started atomic.Int64
	ended   atomic.Int64
	// fetchIdle is the time a source task spent in fetches that waited for
	// input (returned less than a full batch).
	fetchIdle atomic.Int64
	// bytesIn counts the bytes of the exchange buffers the task read.
	bytesIn atomic.Int64
	// vertices are the chain's vertices, head first.
	vertices []vertexClock
	// pools are the chain's Wasm instance pools.
	pools []*meteredPool
}

func (s *taskStats) begin() { s.started.Store(MonoNanos()) }
func (s *taskStats) end()   { s.ended.Store(MonoNanos()) }

// fetched accounts one source fetch that began at start.
func (s *taskStats) fetched(start int64, full bool) {
	if !full {
		s.fetchIdle.Add(MonoNanos() - start)
	}
}

// taskFigures are a task's cumulative figures at one instant.
type taskFigures struct {
	// wall is the time the task has run; idle, backpressured and busy
	// split it (busy is what neither of the others is, as in Flink).
	wall, idle, backpressured, busy int64
	// hasInput: the task reads an exchange gate; hasOutput: it writes to
	// at least one exchange edge.
	hasInput, hasOutput bool
	in                  exchange.GateStats
	outPoolUsage        float64
	bytesIn, bytesOut   int64
	buffersOut          int64
	// vertexBusy is each chain vertex's own time, in stats.vertices order.
	vertexBusy []int64
}

// figures samples the task at now (a monoNanos reading).
func (t *Task) figures(now int64) taskFigures {
	var f taskFigures
	if started := t.stats.started.Load(); started != 0 {
		if ended := t.stats.ended.Load(); ended != 0 {
			now = ended
		}
		f.wall = max(now-started, 0)
	}
	if t.gate != nil {
		f.hasInput = true
		f.in = t.gate.Stats()
		f.idle = f.in.IdleNanos
		f.bytesIn = t.stats.bytesIn.Load()
	} else {
		f.idle = t.stats.fetchIdle.Load()
	}
	for _, w := range t.writers {
		s := w.Stats()
		f.hasOutput = true
		f.backpressured += s.BackpressuredNanos
		f.bytesOut += s.BytesSent
		f.buffersOut += s.BuffersSent
		f.outPoolUsage += s.OutPoolUsage
	}
	if len(t.writers) > 0 {
		f.outPoolUsage /= float64(len(t.writers))
	}
	f.busy = max(f.wall-f.idle-f.backpressured, 0)
	f.vertexBusy = make([]int64, len(t.stats.vertices))
	for i := range t.stats.vertices {
		f.vertexBusy[i] = t.stats.vertices[i].nanos(now)
	}
	return f
}

// vertexClock makes the clock of vertex v in subtask i. Its exchange
// writers must exist: the builder makes every edge before any task.
func (b *builder) vertexClock(v *plan.Vertex, i int) vertexClock {
	c := vertexClock{id: v.ID, own: &b.j.Counters[v.ID][i].busy}
	for _, e := range v.Out {
		if e.Chained() {
			c.chained = append(c.chained, &b.j.Counters[e.To.ID][i].busy)
		} else {
			c.writers = append(c.writers, b.edges[e].Writer(i))
		}
	}
	return c
}
