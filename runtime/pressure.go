package runtime

import (
	"sync"
	"time"
)

// pressureInterval is how often backpressure is sampled.
const pressureInterval = time.Second

// pressureSampler measures, per subtask, how the last interval split into
// time backpressured (waiting for output buffers: Flink's
// backPressuredTimeMsPerSecond as a ratio), idle (waiting for input) and
// busy, with the exchange pool usages at the end of the interval and the
// share of it each chained vertex took. It runs in its own goroutine while
// the job runs; the API reads its last sample.
type pressureSampler struct {
	mu      sync.Mutex
	sampled time.Time
	samples map[subtaskKey]subtaskSample
}

// subtaskKey names a subtask of a task (the task is its chain head's id).
type subtaskKey struct {
	task    string
	subtask int
}

// subtaskSample is one subtask's last interval, as shares of its wall time.
type subtaskSample struct {
	backpressured, idle, busy float64
	hasInput, hasOutput       bool
	inPoolUsage, outPoolUsage float64
	// vertexBusy is each chain vertex's own busy share, by vertex id.
	vertexBusy map[string]float64
}

func newPressureSampler() *pressureSampler {
	return &pressureSampler{samples: map[subtaskKey]subtaskSample{}}
}

// start samples tasks until the returned stop is called.
func (p *pressureSampler) start(tasks []*task) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := make([]taskFigures, len(tasks))
		now := monoNanos()
		for i, t := range tasks {
			last[i] = t.figures(now)
		}
		tick := time.NewTicker(pressureInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			now := monoNanos()
			next := make(map[subtaskKey]subtaskSample, len(tasks))
			for i, t := range tasks {
				f := t.figures(now)
				if s, ok := sampleOf(t, last[i], f); ok {
					next[subtaskKey{t.name, t.subtask}] = s
				}
				last[i] = f
			}
			p.mu.Lock()
			for k, s := range next {
				p.samples[k] = s
			}
			p.sampled = time.Now().UTC()
			p.mu.Unlock()
		}
	}()
	return func() { close(done); <-finished }
}

// sampleOf turns two figures of t into the shares of the interval between
// them. It reports false when the task did not run in the interval.
func sampleOf(t *task, prev, cur taskFigures) (subtaskSample, bool) {
	wall := cur.wall - prev.wall
	if wall <= 0 {
		return subtaskSample{}, false
	}
	share := func(d int64) float64 { return min(max(float64(d)/float64(wall), 0), 1) }
	s := subtaskSample{
		backpressured: share(cur.backpressured - prev.backpressured),
		idle:          share(cur.idle - prev.idle),
		hasInput:      cur.hasInput,
		hasOutput:     cur.hasOutput,
		inPoolUsage:   cur.in.InPoolUsage,
		outPoolUsage:  cur.outPoolUsage,
		vertexBusy:    make(map[string]float64, len(cur.vertexBusy)),
	}
	s.busy = max(1-s.backpressured-s.idle, 0)
	for i, v := range t.stats.vertices {
		if i < len(prev.vertexBusy) {
			s.vertexBusy[v.id] = share(cur.vertexBusy[i] - prev.vertexBusy[i])
		}
	}
	return s, true
}

// ratio is the task's last sampled backpressured ratio, averaged over its
// subtasks (0 before the first sample).
func (p *pressureSampler) ratio(task string) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum, n := 0.0, 0
	for k, s := range p.samples {
		if k.task == task {
			sum += s.backpressured
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// snapshot copies the last samples and their time (zero before the first).
// The samples' vertexBusy maps are shared: they are never written again.
func (p *pressureSampler) snapshot() (time.Time, map[subtaskKey]subtaskSample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[subtaskKey]subtaskSample, len(p.samples))
	for k, s := range p.samples {
		out[k] = s
	}
	return p.sampled, out
}
